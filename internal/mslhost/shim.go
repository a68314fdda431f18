package mslhost

// shim lets a C++17 compiler build MSL kernels: address spaces and
// attributes vanish (unknown [[...]] attributes are ignored), MSL's
// scalar and vector types and the builtins kiln's kernels use map onto
// C++, and a threadgroup is a set of threads sharing a kilnGroup.
// Threadgroup arrays become function statics (Run rewrites their
// declarations), shared by the group because groups run one at a time.
const shim = `#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
using namespace std;
#define kernel
#define device
#define constant const
#define threadgroup
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;
typedef _Float16 half;
namespace precise { using std::pow; using std::sin; using std::cos; using std::tanh; using std::tan;
    using std::sinh; using std::cosh; using std::asin; using std::acos; using std::atan; using std::asinh;
    using std::acosh; using std::atanh; }
namespace fast { using std::pow; }
template <class T, class U> static inline T as_type(U u) { static_assert(sizeof(T) == sizeof(U), "as_type"); T t; memcpy(&t, &u, sizeof t); return t; }
static inline float rsqrt(float x) { return 1.0f / sqrt(x); }
struct int2 { int x, y; int2(int a, int b) : x(a), y(b) {} };
static inline int2 operator+(int2 a, int b) { return int2(a.x + b, a.y + b); }
struct uint2 { uint x, y; };
struct uint3 { uint x, y, z; };
namespace mem_flags { const int mem_threadgroup = 0; }

// One threadgroup in flight: a barrier over its live threads and the
// lanes' values of a simd_* step.
struct kilnGroup {
    std::mutex mu;
    std::condition_variable cv;
    uint threads, live, waiting = 0, gen = 0, done = 0;
    float lanes[32][32]; // [simdgroup][lane]
};
static thread_local kilnGroup* kilnCur;
static thread_local uint kilnTid;

static inline void kilnRelease(kilnGroup* g) { g->waiting = 0; g->gen++; g->cv.notify_all(); }

static void kilnBarrier() {
    kilnGroup* g = kilnCur;
    std::unique_lock<std::mutex> l(g->mu);
    uint gen = g->gen;
    if (++g->waiting == g->live) { kilnRelease(g); return; }
    if (!g->cv.wait_for(l, std::chrono::seconds(30), [&] { return g->gen != gen; })) {
        fprintf(stderr, "mslhost: thread %u waits at a barrier the rest of its threadgroup does not reach\n", kilnTid);
        exit(3);
    }
}

// kilnNext retires a thread from its group (a barrier the group waits
// at opens when every live thread has arrived), then waits until every
// thread has, so that the next group starts with all of them live.
static void kilnNext() {
    kilnGroup* g = kilnCur;
    std::unique_lock<std::mutex> l(g->mu);
    if (--g->live == 0) {
        g->live = g->threads;
        g->done++;
        g->cv.notify_all();
        return;
    }
    if (g->waiting > 0 && g->waiting == g->live) { kilnRelease(g); }
    uint done = g->done;
    if (!g->cv.wait_for(l, std::chrono::seconds(30), [&] { return g->done != done; })) {
        fprintf(stderr, "mslhost: thread %u finished, the rest of its threadgroup never does\n", kilnTid);
        exit(3);
    }
}

static inline void threadgroup_barrier(int) { kilnBarrier(); }

// kilnSimd combines the values of the calling thread's simdgroup, lane
// 0 first; every thread of the group must call it.
template <class F> static float kilnSimd(float v, F f) {
    kilnGroup* g = kilnCur;
    uint sg = kilnTid / 32u, n = std::min(32u, g->threads - sg * 32u);
    g->lanes[sg][kilnTid % 32u] = v;
    kilnBarrier();
    float r = g->lanes[sg][0];
    for (uint i = 1; i < n; i++) { r = f(r, g->lanes[sg][i]); }
    kilnBarrier();
    return r;
}
static inline float simd_sum(float v) { return kilnSimd(v, [](float a, float b) { return a + b; }); }
static inline float simd_product(float v) { return kilnSimd(v, [](float a, float b) { return a * b; }); }
static inline float simd_max(float v) { return kilnSimd(v, [](float a, float b) { return fmax(a, b); }); }
static inline float simd_min(float v) { return kilnSimd(v, [](float a, float b) { return fmin(a, b); }); }

// simdgroup_float8x8: every lane holds the whole matrix; lane 0 stores.
struct simdgroup_float8x8 { float v[8][8]; };
template <class T, int R, int C> static inline simdgroup_float8x8 make_filled_simdgroup_matrix(T x) {
    simdgroup_float8x8 m;
    for (int i = 0; i < 8; i++) { for (int j = 0; j < 8; j++) { m.v[i][j] = x; } }
    return m;
}
static inline void simdgroup_load(simdgroup_float8x8& m, const float* p, long stride) {
    for (int i = 0; i < 8; i++) { for (int j = 0; j < 8; j++) { m.v[i][j] = p[i * stride + j]; } }
}
static inline void simdgroup_store(const simdgroup_float8x8& m, float* p, long stride) {
    if (kilnTid % 32u != 0u) { return; }
    for (int i = 0; i < 8; i++) { for (int j = 0; j < 8; j++) { p[i * stride + j] = m.v[i][j]; } }
}
static inline void simdgroup_multiply_accumulate(simdgroup_float8x8& d, const simdgroup_float8x8& a, const simdgroup_float8x8& b, const simdgroup_float8x8& c) {
    simdgroup_float8x8 r;
    for (int i = 0; i < 8; i++) { for (int j = 0; j < 8; j++) {
        float s = c.v[i][j];
        for (int k = 0; k < 8; k++) { s += a.v[i][k] * b.v[k][j]; }
        r.v[i][j] = s;
    } }
    d = r;
}

// kilnLaunch runs f(group, thread) for every thread of every group, a
// group at a time, its threads at once: one host thread per thread of
// a group, running every group in turn.
template <class F> static void kilnLaunch(uint gx, uint gy, uint gz, uint nt, F f) {
    kilnGroup g;
    g.threads = g.live = nt;
    std::vector<std::thread> ts;
    for (uint t = 0; t < nt; t++) {
        ts.emplace_back([&g, &f, gx, gy, gz, t] {
            kilnCur = &g;
            kilnTid = t;
            for (uint z = 0; z < gz; z++) { for (uint y = 0; y < gy; y++) { for (uint x = 0; x < gx; x++) {
                f(uint3{x, y, z}, t);
                kilnNext();
            } } }
        });
    }
    for (auto& th : ts) { th.join(); }
}

static unsigned char* kilnRegion(size_t n) {
    unsigned char* p = (unsigned char*)aligned_alloc(64, (n + 64) / 64 * 64);
    if (p == nullptr || fread(p, 1, n, stdin) != n) { fprintf(stderr, "mslhost: short input\n"); exit(2); }
    return p;
}
`
