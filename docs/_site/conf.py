"""Sphinx settings for the course's website (docs/_site/build.py stages the pages and runs Sphinx with these)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

project = "Extending PyTorch with C and CUDA"
author = "the course's authors"
copyright = "the course's authors"
root_doc = "index"
language = "en"

extensions = ["myst_nb", "sphinx_copybutton", "sphinxcontrib.mermaid", "sphinx.ext.mathjax"]
# chapter 07's committed tables are included into its results pages (build.py), not pages of their own
STAGE = ROOT / "build" / "site-src"
exclude_patterns = [".pages"] + sorted(
    str(p.relative_to(STAGE)) for p in STAGE.glob("chapters/*/results/*/*.md") if p.name != "index.md"
)
suppress_warnings = ["myst.header"]  # lessons may go from # to ### on purpose

# MyST: GitHub's Markdown as the READMEs are written for it: $math$, ```math and ```mermaid fences, heading anchors.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "strikethrough"]
myst_fence_as_directive = ["mermaid", "math"]
myst_heading_anchors = 3

# Notebooks are shown with the outputs stored in them; the site never runs one.
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no widget state is stored, and its default loader comes from a CDN
nb_merge_streams = True

# Everything the pages load is served from site/_static (no CDN): see common/requirements-site-assets.txt.
html_static_path = [str(ROOT / "docs" / "_site" / "static"), str(ROOT / "build" / "site-assets" / "static")]
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
# MathJax 2: MyST marks every section tex2jax_ignore (so a stray $ in prose stays a $) and the math in it with the
# class "math", which tex2jax must be told to process. The wheel ships the STIX-Web fonts only (as the classic
# Jupyter Notebook configured them).
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
    "messageStyle": "none",
    "showMathMenu": False,
    "HTML-CSS": {
        "availableFonts": [],
        "webFont": "STIX-Web",
        "imageFont": None,
        "preferredFont": None,
        # its empty placeholder font points at about:blank, which Chromium now refuses with a console error
        "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}},
    },
}
mermaid_use_local = "mermaid/mermaid.mjs"
mermaid_version = ""
mermaid_d3_zoom = False
mermaid_height = "auto"  # the diagram keeps its proportions (the default squeezes it into 500 px)
mermaid_fullscreen = True
mermaid_fullscreen_button = "⤢"  # the default, ⛶, is in none of the fonts Debian's Chromium comes with
mermaid_init_config = {"startOnLoad": False, "securityLevel": "strict"}

html_theme = "furo"
html_title = project
html_css_files = ["course.css"]
html_copy_source = False
html_show_sourcelink = False
html_show_sphinx = False
html_theme_options = {"navigation_with_keys": True}
pygments_style = "friendly"
pygments_dark_style = "monokai"

# The copy button leaves out prompts and line numbers, so what lands in a terminal runs.
copybutton_prompt_text = r"\$ |>>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"
html_favicon = str(ROOT / "docs" / "_site" / "static" / "favicon.svg")  # without one the browser asks for /favicon.ico


def _keep_notebook_files_in_build(app):
    # MyST-NB writes notebook copies and images beside the output folder, which is the repository's root here.
    folder = ROOT / "build" / "site-jupyter"
    app.env.mystnb_config = app.env.mystnb_config.copy(
        output_folder=str(folder / "jupyter_execute"), execution_cache_path=str(folder / "jupyter_cache")
    )


def setup(app):
    app.connect("builder-inited", _keep_notebook_files_in_build, priority=900)  # after MyST-NB's own (500)
