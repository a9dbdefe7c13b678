/*
 * A simulated CUDA driver (libcuda.so) for the CUDA backend's tests on machines without a GPU.
 *
 * It answers every driver call of the backend (src/harness/cuda/driver.rs, SYMBOLS) as an H100
 * or H200 would, from the host: device memory is host memory (the virtual-memory calls map one
 * memfd at several addresses, so aliased views really alias), the JIT hands back the PTX as its
 * "cubin", and kernels take time: each launch keeps its stream busy for PTXL_SIM_KERNEL_US
 * microseconds (default 20), which is what stream and event queries and timing events see.
 * Kernels run no code, but they count as the kernel's opening comment says a GPU would (the
 * launch ABI the code generator writes there): a test launch adds the stress operations it
 * must issue to the histogram's stress counter, and the collect launch after it counts the
 * launch's instances, spread evenly over every outcome word (so every outcome is observed,
 * forbidden ones included), and adds them to the checked counter. The checksum and the stress
 * self-test then pass, and a run's records, reports and result sets are made from CUDA counts.
 * A module loaded as an offline ELF cubin has no comment; it counts as the PTX it was made of
 * when `toolchains prebuild` left that in the store (PTXL_SIM_STORE below), else its kernels
 * count nothing and its runs end at the checksum.
 *
 * What it checks is the driver's contract, as the CUDA Driver API reference states it: a
 * current context on the calling thread, live handles, launch shapes within the device's limits
 * and the kernel's .reqntid, cluster dimensions that divide the grid, no unsafe call while a
 * stream is being captured, copies and fills inside allocated (and, for mapped memory,
 * accessible) memory, timing only between timing events, surfaces only over arrays made for
 * surface access. Three rules are the backend's own, stricter than the driver's: no event
 * recorded and no graph launched into a capture (its marks and timers assume direct
 * recording); no copy into pageable memory queued behind a kernel that never ends (the driver
 * would block for ever there); nothing a kernel uses freed or unloaded while one never ends.
 * Each breach is returned as the error the driver would give (the simulation's
 * CUDA_ERROR_UNKNOWN for the last two) and written to the log as a "violation:" line.
 *
 * Environment:
 *   PTXL_SIM_LOG=FILE        append violations, one "launch:" line per function's first launch,
 *                            one "module:" line per offline cubin loaded, and at exit a
 *                            "stats:" line of launch counts
 *   PTXL_SIM_GPU=h200        an H200 (default an H100 SXM)
 *   PTXL_SIM_STORE=DIR       the toolchain store whose cubins/ and ptx/ name an offline
 *                            cubin's PTX (default $PTX_LITMUS_TOOLCHAINS, else ./.tools)
 *   PTXL_SIM_JIT_PTXAS=PATH  the JIT assembles with this ptxas (for sm_90, with line
 *                            information) and hands back its ELF cubin, which loads counted as the PTX it was made of; by
 *                            default the JIT hands back the PTX itself
 *   PTXL_SIM_KERNEL_US=N     microseconds each kernel keeps its stream busy
 *   PTXL_SIM_REGS=N[,M...]   registers per thread of the kernels of the first module loaded,
 *                            of the second, ...; the last for the rest (default 32)
 *   PTXL_SIM_HANG_AFTER=N    the kernels after the Nth launch never finish
 *   PTXL_SIM_FAULT_AFTER=N   after the Nth launch every call fails with
 *                            CUDA_ERROR_ILLEGAL_ADDRESS, as after a sticky device fault
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
    OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
    INVALID_IMAGE = 200, INVALID_CONTEXT = 201, INVALID_HANDLE = 400, ILLEGAL_STATE = 401,
    NOT_FOUND = 500, NOT_READY = 600, ILLEGAL_ADDRESS = 700, CAPTURE_UNSUPPORTED = 900,
    CAPTURE_INVALIDATED = 901, INVALID_CLUSTER_SIZE = 912, UNKNOWN = 999
};

/* ---- the log ---------------------------------------------------------------------------- */

static FILE *log_file(void) {
    static FILE *f;
    static int opened;
    if (!opened) {
        const char *p = getenv("PTXL_SIM_LOG");
        f = p ? fopen(p, "a") : NULL;
        opened = 1;
    }
    return f;
}

static void logf_line(const char *kind, const char *fmt, va_list ap) {
    FILE *f = log_file();
    if (!f) return;
    fprintf(f, "%s: ", kind);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
}

/* Logs a breach of the driver's contract and returns `code`, the driver's answer to it. */
static CUresult violation(CUresult code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    logf_line("violation", fmt, ap);
    va_end(ap);
    return code;
}

static void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    logf_line("launch", fmt, ap);
    va_end(ap);
}

static void note_module(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    logf_line("module", fmt, ap);
    va_end(ap);
}

/* ---- the device ------------------------------------------------------------------------- */

static int h200(void) {
    const char *g = getenv("PTXL_SIM_GPU");
    return g && strcmp(g, "h200") == 0;
}

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

enum { SMS = 132, THREADS_PER_SM = 2048, CTAS_PER_SM = 32, REGS_PER_SM = 65536,
       SHARED_PER_SM = 228 * 1024, SHARED_PER_BLOCK = 48 * 1024, RESERVED_SHARED = 1024,
       TEX_ALIGN = 512, GRANULARITY = 2 << 20 };

/* The value of device attribute `a` (CUdevice_attribute numbering). */
static int attribute(int a) {
    switch (a) {
    case 1: return 1024;                        /* MAX_THREADS_PER_BLOCK */
    case 5: return 0x7fffffff;                  /* MAX_GRID_DIM_X */
    case 8: return SHARED_PER_BLOCK;            /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 10: return 32;                         /* WARP_SIZE */
    case 13: return 1980000;                    /* CLOCK_RATE, kHz */
    case 14: return TEX_ALIGN;                  /* TEXTURE_ALIGNMENT */
    case 16: return SMS;                        /* MULTIPROCESSOR_COUNT */
    case 33: return 0x19;                       /* PCI_BUS_ID */
    case 36: return h200() ? 3201000 : 2619000; /* MEMORY_CLOCK_RATE, kHz */
    case 37: return h200() ? 6144 : 5120;       /* GLOBAL_MEMORY_BUS_WIDTH */
    case 38: return 50 << 20;                   /* L2_CACHE_SIZE */
    case 39: return THREADS_PER_SM;             /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 56: return 131072;                     /* MAXIMUM_SURFACE2D_WIDTH */
    case 57: return 65536;                      /* MAXIMUM_SURFACE2D_HEIGHT */
    case 75: return 9;                          /* COMPUTE_CAPABILITY_MAJOR */
    case 76: return 0;                          /* COMPUTE_CAPABILITY_MINOR */
    case 81: return SHARED_PER_SM;              /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 82: return REGS_PER_SM;                /* MAX_REGISTERS_PER_MULTIPROCESSOR */
    case 97: return SHARED_PER_SM - RESERVED_SHARED; /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 106: return CTAS_PER_SM;               /* MAX_BLOCKS_PER_MULTIPROCESSOR */
    case 111: return RESERVED_SHARED;           /* RESERVED_SHARED_MEMORY_PER_BLOCK */
    case 120: return 1;                         /* CLUSTER_LAUNCH */
    default: return 0;
    }
}

static int initialised;
static int faulted;
static char primary_context;
static __thread void *current;
static unsigned long long launched, direct_launches, captured_launches, graph_launches;
static unsigned long long modules_loaded, views_mapped, textures_made, surfaces_made;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Whether a context is current on this thread; a faulted device fails every call. */
static CUresult need_context(const char *call) {
    if (!initialised) return violation(NOT_INITIALIZED, "%s before cuInit", call);
    if (current != &primary_context)
        return violation(INVALID_CONTEXT, "%s without a current context on this thread", call);
    return faulted ? ILLEGAL_ADDRESS : OK;
}

CUresult cuInit(unsigned flags) {
    if (flags != 0) return violation(INVALID_VALUE, "cuInit flags %u (must be 0)", flags);
    initialised = 1;
    return OK;
}

CUresult cuDriverGetVersion(int *v) {
    *v = 13000;
    return OK;
}

CUresult cuDeviceGetCount(int *n) {
    if (!initialised) return violation(NOT_INITIALIZED, "cuDeviceGetCount before cuInit");
    *n = 1;
    return OK;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (!initialised) return violation(NOT_INITIALIZED, "cuDeviceGet before cuInit");
    if (ordinal != 0) return INVALID_DEVICE;
    *d = 0;
    return OK;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    /* Never a real GPU's name: what runs here must not pass for a hardware result. */
    const char *n = h200() ? "Simulated H200" : "Simulated H100 80GB HBM3";
    if (d != 0 || len <= 0) return INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", n);
    return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    *bytes = h200() ? 150754820096ull : 85520809984ull;
    return d == 0 ? OK : INVALID_DEVICE;
}

CUresult cuDeviceGetAttribute(int *v, int a, CUdevice d) {
    if (d != 0) return INVALID_DEVICE;
    *v = attribute(a);
    return OK;
}

CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t *w, int format, unsigned channels, CUdevice d) {
    (void)format;
    (void)channels;
    *w = (size_t)1 << 28;
    return d == 0 ? OK : INVALID_DEVICE;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d) {
    if (!initialised) return violation(NOT_INITIALIZED, "cuDevicePrimaryCtxRetain before cuInit");
    if (d != 0) return INVALID_DEVICE;
    *ctx = &primary_context;
    return OK;
}

CUresult cuCtxSetCurrent(void *ctx) {
    if (ctx && ctx != &primary_context)
        return violation(INVALID_CONTEXT, "cuCtxSetCurrent of an unknown context");
    current = ctx;
    return OK;
}

/* ---- streams and capture ---------------------------------------------------------------- */

/* A kernel's effect on its histogram, applied when it runs (see `take_effect`). */
typedef struct Function Function;
typedef struct Effect {
    Function *f;
    CUdeviceptr hist;
} Effect;

/* Effects in launch order: those a capture recorded, or a graph replays. */
typedef struct Effects {
    Effect *at;
    size_t n, cap;
} Effects;

static void push_effect(Effects *e, Effect x) {
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 16;
        e->at = realloc(e->at, e->cap * sizeof *e->at);
    }
    e->at[e->n++] = x;
}

static void take_effect(Effect e);

typedef struct Stream {
    double busy_until;
    int capturing, invalidated;
    unsigned long long captured;
    Effects effects; /* of the capture under way */
} Stream;

static Stream legacy;
static int hung; /* a kernel that never ends has been launched */

static Stream *stream_of(void *s) { return s ? (Stream *)s : &legacy; }

/* Whether freeing what kernels use would pull it from under one that never ends (the driver
 * would wait for it for ever, or free memory a running kernel uses). */
static CUresult under_hung_kernel(const char *call) {
    return hung ? violation(UNKNOWN, "%s while a kernel that never ends still runs", call) : OK;
}

/* Whether a capture is under way: calls the driver calls unsafe then invalidate it. */
static CUresult unsafe_in_capture(Stream *s, const char *call) {
    if (!s->capturing) return OK;
    s->invalidated = 1;
    return violation(CAPTURE_UNSUPPORTED, "%s while the stream is being captured", call);
}

/* Runs `kernels` kernels on `s`: they end `PTXL_SIM_KERNEL_US` each later, or never. */
static void execute(Stream *s, unsigned long long kernels) {
    long hang_after = env_long("PTXL_SIM_HANG_AFTER", -1);
    long fault_after = env_long("PTXL_SIM_FAULT_AFTER", -1);
    double start = fmax(now_s(), s->busy_until);
    launched += kernels;
    s->busy_until = start + kernels * env_long("PTXL_SIM_KERNEL_US", 20) * 1e-6;
    if (hang_after >= 0 && launched > (unsigned long long)hang_after) {
        s->busy_until = INFINITY;
        hung = 1;
    }
    if (fault_after >= 0 && launched > (unsigned long long)fault_after) faulted = 1;
}

CUresult cuStreamCreate(void **s, unsigned flags) {
    CUresult r = need_context("cuStreamCreate");
    if (r) return r;
    if (flags > 1) return violation(INVALID_VALUE, "cuStreamCreate flags %u", flags);
    *s = calloc(1, sizeof(Stream));
    return OK;
}

CUresult cuStreamQuery(void *s) {
    Stream *st = stream_of(s);
    CUresult r = need_context("cuStreamQuery");
    if (r) return r;
    if ((r = unsafe_in_capture(st, "cuStreamQuery"))) return r;
    return now_s() >= st->busy_until ? OK : NOT_READY;
}

CUresult cuStreamBeginCapture_v2(void *s, int mode) {
    Stream *st = stream_of(s);
    CUresult r = need_context("cuStreamBeginCapture");
    if (r) return r;
    if (!s) return violation(INVALID_VALUE, "capture of the legacy stream");
    if (st->capturing) return violation(ILLEGAL_STATE, "cuStreamBeginCapture while capturing");
    if (mode < 0 || mode > 2) return violation(INVALID_VALUE, "capture mode %d", mode);
    st->capturing = 1;
    st->invalidated = 0;
    st->captured = 0;
    st->effects.n = 0;
    return OK;
}

typedef struct Graph {
    unsigned long long kernels;
    int live;
    Effects effects;
} Graph;

/* A copy of `e` that owns its array. */
static Effects copy_effects(const Effects *e) {
    Effects c = {NULL, e->n, e->n};
    if (e->n) {
        c.at = malloc(e->n * sizeof *e->at);
        memcpy(c.at, e->at, e->n * sizeof *e->at);
    }
    return c;
}

CUresult cuStreamEndCapture(void *s, void **graph) {
    Stream *st = stream_of(s);
    CUresult r = need_context("cuStreamEndCapture");
    if (r) return r;
    if (!st->capturing) return violation(ILLEGAL_STATE, "cuStreamEndCapture without a capture");
    st->capturing = 0;
    *graph = NULL;
    if (st->invalidated) return CAPTURE_INVALIDATED;
    Graph *g = calloc(1, sizeof(Graph));
    g->kernels = st->captured;
    g->live = 1;
    g->effects = copy_effects(&st->effects);
    *graph = g;
    return OK;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
    Graph *g = graph;
    CUresult r = need_context("cuGraphInstantiate");
    if (r) return r;
    if (!g || !g->live) return violation(INVALID_VALUE, "cuGraphInstantiate of no live graph");
    if (flags) return violation(INVALID_VALUE, "cuGraphInstantiate flags %llu", flags);
    Graph *e = calloc(1, sizeof(Graph));
    *e = *g;
    e->effects = copy_effects(&g->effects);
    *exec = e;
    return OK;
}

CUresult cuGraphLaunch(void *exec, void *s) {
    Graph *e = exec;
    Stream *st = stream_of(s);
    CUresult r = need_context("cuGraphLaunch");
    if (r) return r;
    if (!e || !e->live) return violation(INVALID_HANDLE, "cuGraphLaunch of no live executable");
    if (st->capturing) return violation(INVALID_VALUE, "cuGraphLaunch into a capture");
    graph_launches++;
    execute(st, e->kernels);
    for (size_t i = 0; i < e->effects.n; i++) take_effect(e->effects.at[i]);
    return OK;
}

static CUresult destroy_graph(void *graph, const char *call) {
    Graph *g = graph;
    if (!g || !g->live) return violation(INVALID_VALUE, "%s of no live graph", call);
    g->live = 0; /* kept, not freed: a later use of the handle is then seen */
    free(g->effects.at);
    g->effects = (Effects){0};
    return OK;
}

CUresult cuGraphDestroy(void *g) { return destroy_graph(g, "cuGraphDestroy"); }
CUresult cuGraphExecDestroy(void *e) { return destroy_graph(e, "cuGraphExecDestroy"); }

/* ---- events ----------------------------------------------------------------------------- */

typedef struct Event {
    unsigned flags;
    int recorded, live;
    double at;
} Event;

CUresult cuEventCreate(void **e, unsigned flags) {
    CUresult r = need_context("cuEventCreate");
    if (r) return r;
    Event *ev = calloc(1, sizeof(Event));
    ev->flags = flags;
    ev->live = 1;
    *e = ev;
    return OK;
}

CUresult cuEventDestroy_v2(void *e) {
    Event *ev = e;
    if (!ev || !ev->live) return violation(INVALID_HANDLE, "cuEventDestroy of no live event");
    ev->live = 0;
    return OK;
}

CUresult cuEventRecord(void *e, void *s) {
    Event *ev = e;
    Stream *st = stream_of(s);
    CUresult r = need_context("cuEventRecord");
    if (r) return r;
    if (!ev || !ev->live) return violation(INVALID_HANDLE, "cuEventRecord of no live event");
    if (st->capturing) return violation(INVALID_VALUE, "cuEventRecord into a capture");
    ev->recorded = 1;
    ev->at = fmax(now_s(), st->busy_until);
    return OK;
}

CUresult cuEventQuery(void *e) {
    Event *ev = e;
    CUresult r = need_context("cuEventQuery");
    if (r) return r;
    if (!ev || !ev->live) return violation(INVALID_HANDLE, "cuEventQuery of no live event");
    return !ev->recorded || now_s() >= ev->at ? OK : NOT_READY;
}

CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    Event *x = a, *y = b;
    CUresult r = need_context("cuEventElapsedTime");
    if (r) return r;
    if (!x || !y || !x->live || !y->live)
        return violation(INVALID_HANDLE, "cuEventElapsedTime of no live event");
    if ((x->flags | y->flags) & 2)
        return violation(INVALID_HANDLE, "cuEventElapsedTime of an event without timing");
    if (!x->recorded || !y->recorded)
        return violation(INVALID_HANDLE, "cuEventElapsedTime of an unrecorded event");
    if (now_s() < x->at || now_s() < y->at) return NOT_READY;
    *ms = (float)((y->at - x->at) * 1e3);
    return OK;
}

/* ---- memory ----------------------------------------------------------------------------- */

enum { ALLOCATED, MAPPED, RESERVED };

typedef struct Region {
    uintptr_t base;
    size_t bytes;
    int kind, accessible;
} Region;

static Region regions[4096];
static int region_count;

static Region *region_at(uintptr_t base, int kind) {
    for (int i = 0; i < region_count; i++)
        if (regions[i].base == base && regions[i].kind == kind) return &regions[i];
    return NULL;
}

static Region *region_holding(uintptr_t p, size_t n, int kind) {
    for (int i = 0; i < region_count; i++) {
        Region *g = &regions[i];
        if (g->kind == kind && p >= g->base && p + n <= g->base + g->bytes) return g;
    }
    return NULL;
}

static void add_region(uintptr_t base, size_t bytes, int kind, int accessible) {
    if (region_count < (int)(sizeof regions / sizeof *regions))
        regions[region_count++] = (Region){base, bytes, kind, accessible};
}

static void remove_region(Region *g) { *g = regions[--region_count]; }

/* Whether kernels and copies may touch [p, p + n): allocated, or mapped and made accessible. */
static int device_memory(CUdeviceptr p, size_t n) {
    Region *m = region_holding((uintptr_t)p, n, MAPPED);
    return region_holding((uintptr_t)p, n, ALLOCATED) || (m && m->accessible);
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    void *m = NULL;
    CUresult r = need_context("cuMemAlloc");
    if (r) return r;
    if (bytes == 0) return violation(INVALID_VALUE, "cuMemAlloc of 0 bytes");
    if (posix_memalign(&m, 256, bytes)) return OUT_OF_MEMORY;
    memset(m, 0xa5, bytes); /* device memory starts with whatever it held */
    add_region((uintptr_t)m, bytes, ALLOCATED, 1);
    *p = (uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    Region *g = region_at((uintptr_t)p, ALLOCATED);
    CUresult r = need_context("cuMemFree");
    if (r || (r = under_hung_kernel("cuMemFree"))) return r;
    if (!g) return violation(INVALID_VALUE, "cuMemFree of %#llx, not an allocation", p);
    free((void *)g->base);
    remove_region(g);
    return OK;
}

static CUresult fill_check(CUdeviceptr p, size_t bytes, void *s, const char *call) {
    CUresult r = need_context(call);
    if (r) return r;
    if (!device_memory(p, bytes))
        return violation(INVALID_VALUE, "%s of %zu bytes at %#llx outside device memory", call,
                         bytes, p);
    return unsafe_in_capture(stream_of(s), call);
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *s) {
    CUresult r = fill_check(p, n, s, "cuMemsetD8Async");
    if (r) return r;
    memset((void *)(uintptr_t)p, v, n);
    return OK;
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void *s) {
    CUresult r = fill_check(p, n * 4, s, "cuMemsetD32Async");
    if (r) return r;
    if (p % 4) return violation(INVALID_VALUE, "cuMemsetD32Async at an unaligned address");
    for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)p)[i] = v;
    return OK;
}

/* Into pageable memory the copy returns only once it is done: behind a kernel that never
 * ends it would never return, which the backend must not let happen. */
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *s) {
    Stream *st = stream_of(s);
    CUresult r = fill_check(src, n, s, "cuMemcpyDtoHAsync");
    if (r) return r;
    if (isinf(st->busy_until) && now_s() < st->busy_until)
        return violation(UNKNOWN, "cuMemcpyDtoHAsync behind a kernel that never ends (the "
                                  "driver would block for ever)");
    while (now_s() < st->busy_until) usleep(50);
    memcpy(dst, (void *)(uintptr_t)src, n);
    return OK;
}

/* ---- virtual memory: one memfd mapped at several addresses ------------------------------ */

typedef struct Prop {
    int type, handle_types, location_type, location_id;
} Prop;

static CUresult check_prop(const Prop *p, const char *call) {
    if (p->type != 1 || p->location_type != 1 || p->location_id != 0)
        return violation(INVALID_VALUE, "%s: not pinned memory of device 0", call);
    return OK;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const Prop *p, int option) {
    CUresult r = check_prop(p, "cuMemGetAllocationGranularity");
    if (r) return r;
    if (option != 0 && option != 1) return INVALID_VALUE;
    *g = GRANULARITY;
    return OK;
}

CUresult cuMemCreate(unsigned long long *handle, size_t bytes, const Prop *p,
                     unsigned long long flags) {
    CUresult r = need_context("cuMemCreate");
    if (r || (r = check_prop(p, "cuMemCreate"))) return r;
    if (bytes == 0 || bytes % GRANULARITY || flags)
        return violation(INVALID_VALUE, "cuMemCreate of %zu bytes (granularity %d)", bytes,
                         GRANULARITY);
    int fd = memfd_create("ptxl-sim", 0);
    if (fd < 0 || ftruncate(fd, (off_t)bytes)) return OUT_OF_MEMORY;
    *handle = ((unsigned long long)bytes << 20) | (unsigned)fd;
    return OK;
}

static int handle_fd(unsigned long long h) { return (int)(h & 0xfffff); }
static size_t handle_bytes(unsigned long long h) { return (size_t)(h >> 20); }

CUresult cuMemRelease(unsigned long long h) {
    close(handle_fd(h));
    return OK;
}

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t bytes, size_t align, CUdeviceptr addr,
                             unsigned long long flags) {
    CUresult r = need_context("cuMemAddressReserve");
    if (r) return r;
    if (bytes == 0 || bytes % GRANULARITY || addr || flags || (align && align > GRANULARITY))
        return violation(INVALID_VALUE, "cuMemAddressReserve of %zu bytes", bytes);
    size_t span = bytes + GRANULARITY;
    char *m = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return OUT_OF_MEMORY;
    char *base = (char *)(((uintptr_t)m + GRANULARITY - 1) & ~(uintptr_t)(GRANULARITY - 1));
    add_region((uintptr_t)base, bytes, RESERVED, 0);
    *p = (uintptr_t)base;
    return OK;
}

CUresult cuMemAddressFree(CUdeviceptr p, size_t bytes) {
    Region *g = region_at((uintptr_t)p, RESERVED);
    if (!g || g->bytes != bytes) return violation(INVALID_VALUE, "cuMemAddressFree of no range");
    if (region_holding((uintptr_t)p, bytes, MAPPED))
        return violation(INVALID_VALUE, "cuMemAddressFree of a range still mapped");
    remove_region(g);
    return OK;
}

CUresult cuMemMap(CUdeviceptr p, size_t bytes, size_t offset, unsigned long long h,
                  unsigned long long flags) {
    CUresult r = need_context("cuMemMap");
    if (r) return r;
    if (!region_holding((uintptr_t)p, bytes, RESERVED) || p % GRANULARITY || flags)
        return violation(INVALID_VALUE, "cuMemMap outside a reserved range");
    if (offset + bytes > handle_bytes(h))
        return violation(INVALID_VALUE, "cuMemMap of %zu bytes past the allocation", bytes);
    void *m = mmap((void *)(uintptr_t)p, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   handle_fd(h), (off_t)offset);
    if (m == MAP_FAILED) return OUT_OF_MEMORY;
    add_region((uintptr_t)p, bytes, MAPPED, 0);
    views_mapped++;
    return OK;
}

CUresult cuMemUnmap(CUdeviceptr p, size_t bytes) {
    Region *g = region_at((uintptr_t)p, MAPPED);
    if (under_hung_kernel("cuMemUnmap")) return UNKNOWN;
    if (!g || g->bytes != bytes) return violation(INVALID_VALUE, "cuMemUnmap of no mapping");
    mmap((void *)(uintptr_t)p, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    remove_region(g);
    return OK;
}

typedef struct AccessDesc {
    int location_type, location_id, flags;
} AccessDesc;

CUresult cuMemSetAccess(CUdeviceptr p, size_t bytes, const AccessDesc *d, size_t count) {
    CUresult r = need_context("cuMemSetAccess");
    if (r) return r;
    if (count != 1 || d->location_type != 1 || d->location_id != 0 || d->flags != 3)
        return violation(INVALID_VALUE, "cuMemSetAccess: not read-write for device 0");
    int covered = 0;
    for (int i = 0; i < region_count; i++) {
        Region *g = &regions[i];
        if (g->kind == MAPPED && g->base >= p && g->base + g->bytes <= p + bytes) {
            g->accessible = 1;
            covered += (int)(g->bytes / GRANULARITY);
        }
    }
    if ((size_t)covered * GRANULARITY != bytes)
        return violation(INVALID_VALUE, "cuMemSetAccess over memory not all mapped");
    return OK;
}

/* ---- textures, arrays, surfaces --------------------------------------------------------- */

typedef struct Array {
    size_t width, height, depth;
    int format;
    unsigned channels, flags;
} Array;

typedef struct ResourceDesc {
    int type;
    union {
        Array *array;
        struct {
            CUdeviceptr ptr;
            int format;
            unsigned channels;
            size_t bytes;
        } linear;
        int reserved[32];
    } res;
    unsigned flags;
} ResourceDesc;

static unsigned long long objects_made;

CUresult cuArray3DCreate_v2(void **a, const Array *d) {
    CUresult r = need_context("cuArray3DCreate");
    if (r) return r;
    if (d->depth || d->width > (size_t)attribute(56) || d->height > (size_t)attribute(57))
        return violation(INVALID_VALUE, "cuArray3DCreate of %zu x %zu x %zu", d->width,
                         d->height, d->depth);
    Array *m = malloc(sizeof *m);
    *m = *d;
    *a = m;
    return OK;
}

CUresult cuArrayDestroy(void *a) {
    CUresult r = under_hung_kernel("cuArrayDestroy");
    return r ? r : a ? (free(a), OK) : INVALID_HANDLE;
}

CUresult cuTexObjectCreate(unsigned long long *t, const ResourceDesc *r, const void *tex,
                           const void *view) {
    CUresult c = need_context("cuTexObjectCreate");
    if (c) return c;
    if (!tex) return violation(INVALID_VALUE, "cuTexObjectCreate without a texture descriptor");
    if (r->type == 2) {
        if (r->res.linear.ptr % TEX_ALIGN)
            return violation(INVALID_VALUE, "a linear texture at %#llx, not %d-byte aligned",
                             r->res.linear.ptr, TEX_ALIGN);
        if (!device_memory(r->res.linear.ptr, r->res.linear.bytes))
            return violation(INVALID_VALUE, "a linear texture over memory not allocated");
    } else if (r->type != 0 || view) {
        return violation(INVALID_VALUE, "cuTexObjectCreate of resource type %d", r->type);
    }
    *t = ++objects_made;
    textures_made++;
    return OK;
}

CUresult cuSurfObjectCreate(unsigned long long *s, const ResourceDesc *r) {
    CUresult c = need_context("cuSurfObjectCreate");
    if (c) return c;
    if (r->type != 0 || !r->res.array)
        return violation(INVALID_VALUE, "a surface over resource type %d (arrays only)", r->type);
    if (!(r->res.array->flags & 2))
        return violation(INVALID_VALUE, "a surface over an array made without SURFACE_LDST");
    *s = ++objects_made;
    surfaces_made++;
    return OK;
}

CUresult cuTexObjectDestroy(unsigned long long t) { return t ? OK : INVALID_VALUE; }
CUresult cuSurfObjectDestroy(unsigned long long s) { return s ? OK : INVALID_VALUE; }

/* ---- modules ---------------------------------------------------------------------------- */

static const char CUBIN_TAG[] = "SIMCUBIN\n";

typedef struct Link {
    char *ptx;
    char *cubin;
    size_t cubin_bytes;
    unsigned options;
    int *option_kinds;
    void **option_values;
} Link;

/* What a module's opening comment says its kernels count (see `abi` below). */
typedef struct Abi {
    char test[64], collect[64], hist[64]; /* the entries, the histogram's parameter */
    unsigned long long instances, outcomes, stress_ops;
    int checked, stress; /* the words of those counters after the outcome words */
} Abi;

typedef struct Module {
    char *text; /* the PTX, or the ELF image of an offline cubin */
    size_t bytes;
    int elf, live;
    int regs; /* registers per thread of its kernels */
    int counts; /* whether `abi` was read from its comment */
    Abi abi;
    unsigned long long ran; /* test launches since its last collect launch ran */
} Module;

/* Reads the launch ABI from the comment at the top of the PTX: the entry names and instances,
 * the histogram's parameter, outcome words and counter order, the stress a launch issues. */
static int abi(const char *text, Abi *a) {
    const char *e = strstr(text, "// entries: "), *h = strstr(text, "// histogram (");
    const char *s = strstr(text, "draws memory stress: at least ");
    if (!e || !h || !s) return 0;
    if (sscanf(e, "// entries: %63s runs %llu instances; %63s counts", a->test, &a->instances,
               a->collect) != 3 ||
        sscanf(h, "// histogram (%63[^,], u64 words): %llu outcome words, then", a->hist,
               &a->outcomes) != 2 ||
        sscanf(s, "draws memory stress: at least %llu", &a->stress_ops) != 1)
        return 0;
    const char *list = strstr(h, ", then ") + 7, *end = strchr(list, '\n');
    a->checked = a->stress = -1;
    for (int i = 0; list < end; i++) {
        size_t n = strcspn(list, " \n");
        if (n == 7 && !strncmp(list, "checked", 7)) a->checked = i;
        if (n == 10 && !strncmp(list, "stress_ops", 10)) a->stress = i;
        list += n + (list[n] == ' ');
    }
    return a->checked >= 0 && a->stress >= 0;
}

/* The registers of the kernels of the `k`th module loaded (PTXL_SIM_REGS). */
static int registers_of_module(unsigned long long k) {
    const char *v = getenv("PTXL_SIM_REGS");
    long regs = 32;
    for (unsigned long long i = 0; v && *v; i++) {
        char *end;
        regs = strtol(v, &end, 10);
        if (i == k || *end != ',') break;
        v = end + 1;
    }
    return (int)regs;
}

/* Writes the JIT's outputs over the option values as the driver does: the info log, the
 * bytes it filled, the wall time as a float in the slot's low bytes. */
static void jit_outputs(unsigned n, const int *kinds, void **values, const char *info) {
    char *buf = NULL;
    for (unsigned i = 0; i < n; i++)
        if (kinds[i] == 3) buf = values[i];
    for (unsigned i = 0; i < n; i++) {
        if (kinds[i] == 4 && buf) {
            size_t cap = (size_t)(uintptr_t)values[i];
            size_t w = (size_t)snprintf(buf, cap, "%s", info);
            values[i] = (void *)(uintptr_t)(w < cap ? w + 1 : cap);
        } else if (kinds[i] == 2) {
            float ms = 1.5f;
            memcpy(&values[i], &ms, sizeof ms);
        }
    }
}

CUresult cuLinkCreate_v2(unsigned n, int *kinds, void **values, void **state) {
    CUresult r = need_context("cuLinkCreate");
    if (r) return r;
    Link *l = calloc(1, sizeof(Link));
    l->options = n;
    l->option_kinds = kinds;
    l->option_values = values;
    *state = l;
    return OK;
}

CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t bytes, const char *name,
                          unsigned n, int *kinds, void **values) {
    Link *l = state;
    (void)name, (void)n, (void)kinds, (void)values;
    if (type != 1) return violation(INVALID_VALUE, "cuLinkAddData of input type %d", type);
    if (bytes == 0 || ((char *)data)[bytes - 1] != '\0')
        return violation(INVALID_VALUE, "PTX input whose size does not end at its NUL");
    if (!strstr(data, ".version") || !strstr(data, ".target") || !strstr(data, ".entry"))
        return INVALID_IMAGE;
    l->ptx = strdup(data);
    return OK;
}

/* What the simulated JIT assembled with PTXL_SIM_JIT_PTXAS: each ELF cubin it handed back
 * and the PTX it was made of, so that loading the cubin counts as that PTX. */
typedef struct Jitted {
    char *cubin, *ptx;
    size_t bytes;
    struct Jitted *next;
} Jitted;
static Jitted *jitted;

static char *read_file(const char *path, size_t *bytes);

/* `ptx` assembled for sm_90 by the ptxas at `ptxas`: a malloc'd ELF image, or NULL. */
static char *assemble(const char *ptxas, const char *ptx, size_t *bytes) {
    char dir[] = "/tmp/ptxl-sim-jit.XXXXXX", src[64], bin[64], cmd[4096];
    if (!mkdtemp(dir)) return NULL;
    snprintf(src, sizeof src, "%s/k.ptx", dir);
    snprintf(bin, sizeof bin, "%s/k.cubin", dir);
    FILE *f = fopen(src, "w");
    char *out = NULL;
    if (f && fputs(ptx, f) >= 0 && fclose(f) == 0) {
        /* With line information: like a driver's JIT, another file than ptxas's own for the
         * same code. */
        snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 --generate-line-info '%s' -o '%s' 2>/dev/null",
                 ptxas, src, bin);
        if (system(cmd) == 0) out = read_file(bin, bytes);
    }
    unlink(src), unlink(bin), rmdir(dir);
    return out;
}

/* The PTX the simulated JIT made the cubin `img` of `bytes` from, or NULL. */
static char *jitted_source(const unsigned char *img, size_t bytes) {
    for (Jitted *j = jitted; j; j = j->next)
        if (j->bytes == bytes && !memcmp(j->cubin, img, bytes)) return strdup(j->ptx);
    return NULL;
}

CUresult cuLinkComplete(void *state, void **cubin, size_t *bytes) {
    Link *l = state;
    if (!l->ptx) return violation(INVALID_VALUE, "cuLinkComplete of nothing added");
    const char *ptxas = getenv("PTXL_SIM_JIT_PTXAS");
    if (ptxas) {
        l->cubin = assemble(ptxas, l->ptx, &l->cubin_bytes);
        if (!l->cubin) return violation(INVALID_IMAGE, "%s did not assemble the PTX", ptxas);
        Jitted *j = calloc(1, sizeof(Jitted));
        j->cubin = malloc(l->cubin_bytes);
        memcpy(j->cubin, l->cubin, l->cubin_bytes);
        j->ptx = strdup(l->ptx), j->bytes = l->cubin_bytes, j->next = jitted, jitted = j;
    } else {
        l->cubin_bytes = sizeof CUBIN_TAG - 1 + strlen(l->ptx) + 1;
        l->cubin = malloc(l->cubin_bytes);
        snprintf(l->cubin, l->cubin_bytes, "%s%s", CUBIN_TAG, l->ptx);
    }
    jit_outputs(l->options, l->option_kinds, l->option_values, "info    : simulated JIT\n");
    *cubin = l->cubin;
    *bytes = l->cubin_bytes;
    return OK;
}

CUresult cuLinkDestroy(void *state) {
    Link *l = state;
    if (l->cubin) memset(l->cubin, 0, l->cubin_bytes); /* a use after destroy loads nothing */
    free(l->cubin);
    free(l->ptx);
    free(l);
    return OK;
}

/* The size of an ELF64 image: its section header table or, after that in ptxas's cubins, its
 * program header table ends it. */
static size_t elf_bytes(const unsigned char *e) {
    uint64_t shoff, phoff;
    uint16_t phentsize, phnum, shentsize, shnum;
    memcpy(&phoff, e + 0x20, 8);
    memcpy(&shoff, e + 0x28, 8);
    memcpy(&phentsize, e + 0x36, 2);
    memcpy(&phnum, e + 0x38, 2);
    memcpy(&shentsize, e + 0x3a, 2);
    memcpy(&shnum, e + 0x3c, 2);
    uint64_t sections = shoff + (uint64_t)shentsize * shnum;
    uint64_t programs = phoff + (uint64_t)phentsize * phnum;
    return (size_t)(sections > programs ? sections : programs);
}

/* The whole of file `path` with a NUL after it, or NULL; `*bytes` its size. */
static char *read_file(const char *path, size_t *bytes) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text && fread(text, 1, (size_t)size, f) != (size_t)size) free(text), text = NULL;
    fclose(f);
    if (text) text[size] = '\0', *bytes = (size_t)size;
    return text;
}

/* The PTX in `version`'s ptx/ folder named by the hash in `cubin` (ARCH-HASH.cubin). */
static char *source_named_by(const char *root, const char *version, const char *cubin) {
    const char *hash = strrchr(cubin, '-');
    size_t len = hash ? strcspn(hash + 1, ".") : 0, bytes;
    char path[4096];
    if (!len) return NULL;
    snprintf(path, sizeof path, "%s/%s/ptx/%.*s.ptx", root, version, (int)len, hash + 1);
    return read_file(path, &bytes);
}

/* The PTX an offline cubin of `bytes` was made of, when `toolchains prebuild` left it in the
 * store (PTXL_SIM_STORE, else $PTX_LITMUS_TOOLCHAINS, else ./.tools): the store's cubin with
 * the same bytes names it. NULL when there is none. */
static char *source_of_cubin(const unsigned char *img, size_t bytes) {
    const char *root = getenv("PTXL_SIM_STORE");
    if (!root) root = getenv("PTX_LITMUS_TOOLCHAINS");
    if (!root) root = ".tools";
    DIR *store = opendir(root);
    char *found = NULL, path[4096];
    for (struct dirent *v; store && !found && (v = readdir(store));) {
        snprintf(path, sizeof path, "%s/%s/cubins", root, v->d_name);
        DIR *cubins = v->d_name[0] == '.' ? NULL : opendir(path);
        for (struct dirent *c; cubins && !found && (c = readdir(cubins));) {
            struct stat st;
            size_t size;
            snprintf(path, sizeof path, "%s/%s/cubins/%s", root, v->d_name, c->d_name);
            if (stat(path, &st) || (size_t)st.st_size != bytes) continue;
            char *other = read_file(path, &size);
            if (other && !memcmp(other, img, bytes))
                found = source_named_by(root, v->d_name, c->d_name);
            free(other);
        }
        if (cubins) closedir(cubins);
    }
    if (store) closedir(store);
    return found;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *kinds,
                            void **values) {
    const unsigned char *img = image;
    CUresult r = need_context("cuModuleLoadDataEx");
    if (r) return r;
    Module *m = calloc(1, sizeof(Module));
    if (memcmp(img, CUBIN_TAG, sizeof CUBIN_TAG - 1) == 0) {
        m->text = strdup((const char *)img + sizeof CUBIN_TAG - 1);
        m->bytes = strlen(m->text);
    } else if (memcmp(img, "\x7f" "ELF", 4) == 0 && img[4] == 2) {
        m->bytes = elf_bytes(img);
        m->text = jitted_source(img, m->bytes);
        int jit = m->text != NULL;
        if (!jit) m->text = source_of_cubin(img, m->bytes);
        m->elf = !m->text;
        if (m->elf) {
            m->text = malloc(m->bytes);
            memcpy(m->text, img, m->bytes);
        }
        note_module("%s cubin of %zu bytes, %s", jit ? "JIT" : "offline", m->bytes,
             m->elf ? "its PTX not in the store: counts nothing" : "counted as its PTX");
    } else {
        free(m);
        return INVALID_IMAGE;
    }
    jit_outputs(n, kinds, values, "");
    m->live = 1;
    m->counts = !m->elf && abi(m->text, &m->abi);
    m->regs = registers_of_module(modules_loaded);
    modules_loaded++;
    *module = m;
    return OK;
}

CUresult cuModuleUnload(void *module) {
    Module *m = module;
    if (!m || !m->live) return violation(INVALID_HANDLE, "cuModuleUnload of no live module");
    if (under_hung_kernel("cuModuleUnload")) return UNKNOWN;
    m->live = 0; /* kept: launching one of its functions afterwards is then seen */
    return OK;
}

struct Function {
    Module *module;
    char name[128];
    int hist_param; /* the index of the histogram's parameter, or -1 */
    unsigned params, param_bytes[64];
    unsigned reqntid[3], cluster[3];
    int shared_bytes;
};

/* Reads up to three comma-separated numbers after `directive` in [from, to). */
static void dims(const char *from, const char *to, const char *directive, unsigned out[3]) {
    const char *d = strstr(from, directive);
    out[0] = out[1] = out[2] = 0;
    if (!d || d >= to) return;
    d += strlen(directive);
    for (int i = 0; i < 3; i++) {
        out[i] = (unsigned)strtoul(d, (char **)&d, 10);
        while (*d == ' ' || *d == ',') d++;
        if (*d < '0' || *d > '9') break;
    }
    for (int i = 0; i < 3; i++)
        if (!out[i]) out[i] = 1;
}

/* Whether the parameter declared in [p, end) is named `name`. */
static int named(const char *p, const char *end, const char *name) {
    size_t n = strlen(name);
    while (end > p && end[-1] == ' ') end--;
    return n && (size_t)(end - p) > n && !strncmp(end - n, name, n) && end[-n - 1] == ' ';
}

/* The parameters of the entry whose list starts at `open`, and where the list ends. */
static const char *params(Function *f, const char *open) {
    const char *p = open + 1, *close = strchr(open, ')');
    f->hist_param = -1;
    while (close && (p = strstr(p, ".param")) && p < close) {
        const char *end = strpbrk(p, ",)");
        const char *sq = memchr(p, '[', (size_t)(end - p));
        unsigned bytes = sq ? (unsigned)strtoul(sq + 1, NULL, 10)
                       : strstr(p, "64") && strstr(p, "64") < end ? 8 : 4;
        if (f->module->counts && named(p, end, f->module->abi.hist))
            f->hist_param = (int)f->params;
        if (f->params < 64) f->param_bytes[f->params++] = bytes;
        p = end;
    }
    return close;
}

/* Static shared memory declared in the module: `.shared ... name[N]` of the element size. */
static int shared_bytes(const char *text) {
    int total = 0;
    for (const char *p = text; (p = strstr(p, ".shared ")); p++) {
        const char *end = strchr(p, ';'), *sq = memchr(p, '[', end ? (size_t)(end - p) : 0);
        if (!sq) continue;
        int elem = strstr(p, "64") && strstr(p, "64") < sq ? 8
                 : strstr(p, "32") && strstr(p, "32") < sq ? 4 : 1;
        total += elem * atoi(sq + 1);
    }
    return total;
}

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
    Module *m = module;
    CUresult r = need_context("cuModuleGetFunction");
    if (r) return r;
    if (!m || !m->live) return violation(INVALID_HANDLE, "cuModuleGetFunction of no module");
    Function *f = calloc(1, sizeof(Function));
    f->module = m;
    f->hist_param = -1;
    snprintf(f->name, sizeof f->name, "%s", name);
    if (m->elf) {
        char section[160];
        int k = snprintf(section, sizeof section, ".text.%s", name);
        if (!memmem(m->text, m->bytes, section, (size_t)k + 1)) return free(f), NOT_FOUND;
        *fn = f;
        return OK;
    }
    char key[160];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *e = strstr(m->text, key);
    if (!e) return free(f), NOT_FOUND;
    const char *close = params(f, e + strlen(key) - 1);
    const char *body = close ? strchr(close, '{') : NULL;
    if (!body) return free(f), INVALID_IMAGE;
    dims(close, body, ".reqntid", f->reqntid);
    dims(close, body, ".reqnctapercluster", f->cluster);
    f->shared_bytes = shared_bytes(m->text);
    *fn = f;
    return OK;
}

CUresult cuFuncGetAttribute(int *v, int a, void *fn) {
    Function *f = fn;
    CUresult r = need_context("cuFuncGetAttribute");
    if (r) return r;
    if (!f || !f->module->live) return violation(INVALID_HANDLE, "cuFuncGetAttribute");
    switch (a) {
    case 0: *v = f->reqntid[0] ? (int)(f->reqntid[0] * f->reqntid[1] * f->reqntid[2]) : 1024;
        break;
    case 1: *v = f->shared_bytes; break;
    case 4: *v = f->module->regs; break;
    case 11: case 12: case 13: *v = (int)f->cluster[a - 11]; break;
    default: *v = 0;
    }
    return OK;
}

/* ---- launches --------------------------------------------------------------------------- */

typedef struct LaunchAttribute {
    int id;
    char pad[4];
    union {
        unsigned cluster[3];
        char bytes[64];
    } value;
} LaunchAttribute;

typedef struct LaunchConfig {
    unsigned grid[3], block[3], shared;
    void *stream;
    LaunchAttribute *attrs;
    unsigned attr_count;
} LaunchConfig;

/* CTAs of `f` that fit on one SM with `block` threads and `dynamic` bytes of shared memory. */
static int ctas_per_sm(const Function *f, unsigned block, size_t dynamic) {
    int warps = (int)(block + 31) / 32;
    int regs = f->module->regs;
    int per_warp = (regs * 32 + 255) / 256 * 256;
    int n = CTAS_PER_SM;
    if (THREADS_PER_SM / (warps * 32) < n) n = THREADS_PER_SM / (warps * 32);
    if (REGS_PER_SM / (per_warp * warps) < n) n = REGS_PER_SM / (per_warp * warps);
    size_t shared = (size_t)f->shared_bytes + dynamic;
    if (shared) {
        size_t per_cta = (shared + RESERVED_SHARED + 127) / 128 * 128;
        if (SHARED_PER_SM / per_cta < (size_t)n) n = (int)(SHARED_PER_SM / per_cta);
    }
    return n;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *fn, int block, size_t dyn) {
    Function *f = fn;
    CUresult r = need_context("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (r) return r;
    if (!f || block <= 0 || block > 1024) return violation(INVALID_VALUE, "occupancy query");
    *n = ctas_per_sm(f, (unsigned)block, dyn);
    return OK;
}

/* The cluster dimensions of a launch: the attribute's, else the kernel's own. */
static const unsigned *cluster_of(const LaunchConfig *c, const Function *f) {
    for (unsigned i = 0; i < c->attr_count; i++)
        if (c->attrs[i].id == 4) return c->attrs[i].value.cluster;
    return f->cluster[0] ? f->cluster : NULL;
}

CUresult cuOccupancyMaxActiveClusters(int *n, void *fn, const LaunchConfig *c) {
    Function *f = fn;
    CUresult r = need_context("cuOccupancyMaxActiveClusters");
    if (r) return r;
    const unsigned *k = cluster_of(c, f);
    if (!k) return violation(INVALID_CLUSTER_SIZE, "cuOccupancyMaxActiveClusters without a "
                                                   "cluster dimension");
    unsigned size = k[0] * k[1] * k[2];
    *n = (int)(SMS * ctas_per_sm(f, c->block[0] * c->block[1] * c->block[2], c->shared) / size);
    return OK;
}

static CUresult check_shape(const LaunchConfig *c, const Function *f) {
    unsigned block = c->block[0] * c->block[1] * c->block[2];
    if (!block || block > 1024 || c->block[2] > 64)
        return violation(INVALID_VALUE, "%s: a block of %u threads", f->name, block);
    for (int i = 0; f->reqntid[0] && i < 3; i++)
        if (c->block[i] != f->reqntid[i])
            return violation(INVALID_VALUE, "%s: block %u,%u,%u against .reqntid %u,%u,%u",
                             f->name, c->block[0], c->block[1], c->block[2], f->reqntid[0],
                             f->reqntid[1], f->reqntid[2]);
    if (!c->grid[0] || !c->grid[1] || !c->grid[2] || c->grid[0] > 0x7fffffffu ||
        c->grid[1] > 65535 || c->grid[2] > 65535)
        return violation(INVALID_VALUE, "%s: grid %u,%u,%u", f->name, c->grid[0], c->grid[1],
                         c->grid[2]);
    if (f->shared_bytes + c->shared > SHARED_PER_BLOCK)
        return violation(INVALID_VALUE, "%s: %u bytes of shared memory without opting in",
                         f->name, f->shared_bytes + c->shared);
    return OK;
}

static CUresult check_cluster(const LaunchConfig *c, const Function *f) {
    const unsigned *k = cluster_of(c, f);
    if (!k) return OK;
    if (f->cluster[0] && k != f->cluster && memcmp(k, f->cluster, sizeof f->cluster))
        return violation(INVALID_CLUSTER_SIZE, "%s: cluster attribute against its "
                                               ".reqnctapercluster", f->name);
    unsigned size = k[0] * k[1] * k[2];
    if (!size || size > 8)
        return violation(INVALID_CLUSTER_SIZE, "%s: a cluster of %u CTAs (portable: 8)",
                         f->name, size);
    for (int i = 0; i < 3; i++)
        if (c->grid[i] % k[i])
            return violation(INVALID_CLUSTER_SIZE, "%s: grid %u,%u,%u not whole clusters of "
                             "%u,%u,%u", f->name, c->grid[0], c->grid[1], c->grid[2], k[0],
                             k[1], k[2]);
    return OK;
}

/* The first launch of each function, as one log line: shape and how many of its 8-byte
 * arguments point into device memory. */
static void describe(Function *f, const LaunchConfig *c, void **args) {
    static Function *seen[256];
    static int seen_count;
    for (int i = 0; i < seen_count; i++)
        if (seen[i] == f) return;
    if (seen_count < 256) seen[seen_count++] = f;
    unsigned pointers = 0;
    for (unsigned i = 0; i < f->params; i++) {
        CUdeviceptr v = 0;
        if (f->param_bytes[i] == 8) memcpy(&v, args[i], 8);
        pointers += v && device_memory(v, 1);
    }
    const unsigned *k = cluster_of(c, f);
    note("%s grid=%u block=%u cluster=%u params=%u pointers=%u", f->name, c->grid[0],
         c->block[0] * c->block[1] * c->block[2], k ? k[0] * k[1] * k[2] : 0, f->params,
         pointers);
}

static unsigned long long counted; /* instances the collect launches counted */

/* What a kernel of a module that counts does to its histogram when it runs: a test launch
 * issues its stress operations (the at-least the comment states, and one more for pre-test
 * stress); the collect launch after it counts the launch's instances, spread evenly over
 * the outcome words, as checked. */
static void take_effect(Effect e) {
    Module *m = e.f->module;
    const Abi *a = &m->abi;
    unsigned long long *w = (unsigned long long *)(uintptr_t)e.hist;
    if (!strcmp(e.f->name, a->test)) {
        if (m->ran)
            violation(UNKNOWN, "%s launched again before %s counted its instances", a->test,
                      a->collect);
        m->ran = 1;
        w[a->outcomes + a->stress] += a->stress_ops + 1;
    } else if (!strcmp(e.f->name, a->collect) && m->ran) {
        for (unsigned long long i = 0; i < a->outcomes; i++)
            w[i] += a->instances / a->outcomes + (i < a->instances % a->outcomes);
        w[a->outcomes + a->checked] += a->instances;
        counted += a->instances;
        m->ran = 0;
    }
}

/* The effect of launching `f` with `args`, if it counts: its histogram must be device
 * memory large enough for the words the comment states. */
static CUresult effect_of(Function *f, void **args, Effect *e) {
    const Abi *a = &f->module->abi;
    e->f = NULL;
    if (f->hist_param < 0) return OK;
    memcpy(&e->hist, args[f->hist_param], sizeof e->hist);
    int words = (a->checked > a->stress ? a->checked : a->stress) + 1;
    if (!device_memory(e->hist, (a->outcomes + (unsigned long long)words) * 8))
        return violation(INVALID_VALUE, "%s: its histogram at %#llx is not %llu words of "
                         "device memory", f->name, e->hist, a->outcomes + words);
    e->f = f;
    return OK;
}

CUresult cuLaunchKernelEx(const LaunchConfig *c, void *fn, void **args, void **extra) {
    Function *f = fn;
    Stream *st = stream_of(c->stream);
    CUresult r = need_context("cuLaunchKernelEx");
    if (r) return r;
    if (!f || !f->module->live)
        return violation(INVALID_HANDLE, "cuLaunchKernelEx of a function of no live module");
    if (extra) return violation(INVALID_VALUE, "%s: launched with `extra`", f->name);
    if (f->params && !args) return violation(INVALID_VALUE, "%s: no arguments", f->name);
    for (unsigned i = 0; i < f->params; i++)
        if (!args[i]) return violation(INVALID_VALUE, "%s: argument %u is NULL", f->name, i);
    if ((r = check_shape(c, f)) || (r = check_cluster(c, f))) return r;
    Effect effect;
    if ((r = effect_of(f, args, &effect))) return r;
    describe(f, c, args);
    if (st->capturing) {
        st->captured++;
        captured_launches++;
        if (effect.f) push_effect(&st->effects, effect);
        return OK;
    }
    direct_launches++;
    execute(st, 1);
    if (effect.f) take_effect(effect);
    return OK;
}

__attribute__((destructor)) static void stats(void) {
    FILE *f = log_file();
    if (f && initialised)
        fprintf(f, "stats: direct=%llu captured=%llu graph_launches=%llu kernels=%llu "
                   "modules=%llu views=%llu textures=%llu surfaces=%llu counted=%llu\n",
                direct_launches, captured_launches, graph_launches, launched, modules_loaded,
                views_mapped, textures_made, surfaces_made, counted);
}
