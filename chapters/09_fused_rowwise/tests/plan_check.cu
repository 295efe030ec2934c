// The planner's promises, checked on the CPU: every plan that shape_plan (src/rowwise_kernels.cuh) makes covers its
// row, for every op's pass, version, dtype, row layout and a grid of `tune` values, over rows of 0 to 3 million
// elements. shape_plan asks the device nothing, so this runs where there is no GPU (CI); tests/test_plans.py runs it.
// A plan that leaves part of a row to no thread would leave those outputs unwritten: a silently wrong answer.
//
// Promises, for a plan made (shape_plan returned true):
//   every plan   blocks of whole groups, at most the block the kernels are built for, at most 1024 threads
//   whole rows   one segment; a group below a warp is a power of two (the shuffles' width); the group holds the row
//                (16-byte body layout: the body's packs, its head and tail going to threads 0 .. S - 2)
//   split rows   segments of whole packs that cover the row, none of them empty, each within its group; a cluster
//                of at most 16 blocks
// Rows of 0 elements: any version plans them (nothing launches), and none divides by zero doing so.
// The walk (body_walkers): where a group of the 16-byte body layout walks several rows, one every slots x R rows (R
// groups a block), that step is a whole number of phase_rows, so every row it walks starts at the same place relative
// to 16 bytes (its thread keeps the same columns: the weight's gradient sums them per column).
#include <cstdio>
#include <vector>

#include "rowwise_kernels.cuh"

using namespace rowwise;

namespace {

template <typename T>
const char *broken_promise(const Plan &p, int backward, int64_t n) {
    constexpr int S = Pack<T>::size;
    // whole forward rows in kernels of at most 64 registers: blocks of up to 1024 threads (whole_forward_fits_64)
    const bool big = !backward && p.mode == kWhole && whole_forward_fits_64(sizeof(T), p.ppt, p.packed);
    const int max_group = backward ? kMaxBackwardThreads : big ? kMaxWholeThreads : kMaxThreads;
    const int64_t per_thread = (int64_t)p.ppt * S;
    if (p.group < 1 || p.block < p.group || p.block % p.group != 0) return "a block is not made of whole groups";
    if (p.mode == kReread) {  // version 6: a block (or a cluster's C) walks the row, 1, 2, 4 or 8 packs a thread a step
        if (backward) return "a backward plan in version 6";
        if (p.group != p.block || p.block % kWarp != 0 || p.block > 1024) return "a reread block that is not one group";
        if (p.segments < 1 || p.segments > kMaxCluster) return "a reread row over more blocks than a cluster holds";
        if (p.seg_len % S != 0 || (int64_t)p.segments * p.seg_len < n || (p.segments == 1 && p.seg_len != n))
            return "reread segments that do not cover the row in whole packs";
        if ((p.ppt != 1 && p.ppt != 2 && p.ppt != 4 && p.ppt != 8) || p.packed != kPacks || n % S != 0)
            return "a reread row not of whole packs";
        return nullptr;
    }
    if (p.group > max_group || p.block > 1024) return "a block larger than the kernels are built for";
    if (n == 0) return nullptr;  // nothing runs
    if (p.mode == kWhole) {
        if (p.segments != 1) return "a whole row over several segments";
        if (p.group < kWarp && (p.group & (p.group - 1)) != 0) return "a group under a warp that is not a power of 2";
        if (p.packed == kBody) {
            if (p.group < S) return "a body layout's group has fewer threads than its head and tail need";
            if ((int64_t)p.group * p.ppt < n / S) return "the group does not hold the row's body";
        } else if ((int64_t)p.group * per_thread < n) {
            return "the group does not hold the row";
        }
        return nullptr;
    }
    if (p.seg_len < S || p.seg_len % S != 0) return "a segment that is not whole packs";
    if ((int64_t)p.segments * p.seg_len < n) return "the segments do not cover the row";
    if ((int64_t)(p.segments - 1) * p.seg_len >= n) return "an empty segment";
    if ((int64_t)p.group * per_thread < p.seg_len) return "a segment larger than its group holds";
    if (p.mode == kCluster && p.segments > kMaxCluster) return "a cluster of more than 16 blocks";
    return nullptr;
}

template <typename T>
long check(const char *name) {
    constexpr int S = Pack<T>::size;
    std::vector<int64_t> sizes;
    for (int64_t n = 0; n <= 4100; ++n) sizes.push_back(n);
    for (int64_t n = 4101; n <= 3000000; n = n * 11 / 10 + 1) {
        sizes.push_back(n);
        sizes.push_back(n + 1);
    }
    for (int k = 12; k <= 21; ++k)
        for (int d = -9; d <= 9; ++d) sizes.push_back((1 << k) + d);
    std::vector<rowwise_tuning> tunes(1);  // tunes[0]: none (the kernels choose)
    for (int threads : {0, 32, 96, 256, 1024})
        for (int packs : {0, 1, 2, 4, 8})
            for (int blocks : {0, 1, 2, 3, 16, 100})
                for (int flags : {0, 1, 16})
                    for (int waves : {0, 1}) tunes.push_back(rowwise_tuning{threads, packs, blocks, waves, flags});
    long plans = 0, broken = 0;
    for (int backward : {0, 1})
        for (int version : {ROWWISE_AUTO, ROWWISE_REGISTERS, ROWWISE_CLUSTER, ROWWISE_SPLIT, ROWWISE_REREAD})
            for (int whole : {whole_threads(false), whole_threads(true)})  // the ops' calls: whole forward rows
                for (bool clusters : {false, true})
                    for (int layout : {(int)kSingles, (int)kPacks, (int)kBody})
                        for (size_t t = 0; t < tunes.size(); ++t)
                            for (int64_t n : sizes) {
                                if (layout == kPacks && n % S != 0) continue;  // row_layout: rows of whole packs only
                                if (t > 0 && n > 600 && n % 97 != 1 && n != 4097 && n != 32768 && n != 262144) continue;
                                Plan p;
                                p.packed = layout;
                                const rowwise_tuning *tuning = t == 0 ? nullptr : &tunes[t];
                                if (!shape_plan<T>(backward, version, n, tuning, clusters, &p, ROWWISE_FLAG_MAILBOX,
                                                   whole)) {
                                    // (version 6 takes no backward, no switches, no cluster of over 16 blocks)
                                    const bool reread_refused = version == ROWWISE_REREAD && (backward || tuning);
                                    if (n == 0 && (version != ROWWISE_CLUSTER || clusters) && !reread_refused &&
                                        ++broken <= 10)
                                        printf("%s: a row of 0 elements not planned (backward %d, version %d)\n", name,
                                               backward, version);
                                    continue;
                                }
                                ++plans;
                                const char *why = broken_promise<T>(p, backward, n);
                                if (why != nullptr && ++broken <= 10)
                                    printf(
                                        "%s: %s (backward %d, version %d, n %lld, clusters %d, layout %d, tune [%d, "
                                        "%d, "
                                        "%d, %d, %d]: group %d, block %d, packs %d, segments %d of %lld)\n",
                                        name, why, backward, version, (long long)n, clusters, layout,
                                        tunes[t].block_threads, tunes[t].packs_per_thread, tunes[t].blocks_per_row,
                                        tunes[t].waves, tunes[t].flags, p.group, p.block, p.ppt, p.segments,
                                        (long long)p.seg_len);
                            }
    printf("%-8s %9ld plans, %ld break a promise\n", name, plans, broken);
    return broken;
}

long check_walks() {
    long walks = 0, broken = 0;
    for (int64_t phase : {1, 2, 4, 8})
        for (int groups = 1; groups <= 64; ++groups)
            for (int64_t walkers = 1; walkers <= 3000; walkers += walkers < 64 ? 1 : 37)
                for (int64_t rows : {1, 7, 64, 1000, 4097, 65536, 1 << 20}) {
                    Plan p;
                    p.packed = kBody;
                    p.phase_rows = phase;
                    const int64_t slots = body_walkers(p, walkers, groups, rows);
                    ++walks;
                    const char *why = slots < 1                                              ? "no walker"
                                      : slots * groups < rows && slots * groups % phase != 0 ? "rows at two phases"
                                                                                             : nullptr;
                    if (why != nullptr && ++broken <= 10)
                        printf("walk: %s (phase %lld, %d groups a block, %lld walkers, %lld rows: %lld slots)\n", why,
                               (long long)phase, groups, (long long)walkers, (long long)rows, (long long)slots);
                }
    printf("%-8s %9ld walks, %ld break a promise\n", "walks", walks, broken);
    return broken;
}

}  // namespace

int main() {
    const long broken = check<float>("float32") + check<double>("float64") + check<__half>("float16") +
                        check<__nv_bfloat16>("bfloat16") + check_walks();
    return broken == 0 ? 0 : 1;
}
