// sphinxcontrib-mermaid imports mermaid's default export; the bundle (unpacked by docs/_site/build.py into
// mermaid/dist/) names it `mermaid`.
export { mermaid as default } from "./dist/index.js";
