/* faultinject.c — a fault injector for the anonkit command line, loaded with
 * LD_PRELOAD by tests/cli_faults.sh, in the manner of SQLite's I/O error
 * tests: the n-th call of one kind fails, once, and the run must then fail
 * cleanly (exit 1 or 2 with a message, no output changed, nothing left behind).
 *
 * Environment (read once, by the constructor; nothing happens without it):
 *   FAULT_KIND   malloc | write | fsync | rename | open
 *   FAULT_AT     n >= 1: the n-th call of that kind fails (0 or unset: none)
 *   FAULT_COUNT_FILE  where the number of calls of that kind made by the run
 *                is written at exit (the driver's sweep goes from 1 to it)
 *   FAULT_LOG    where the name of the call made to fail is appended
 *   FAULT_FAKE_SYNC=1  fsync and fdatasync that do not fail return 0 without
 *                syncing (as libeatmydata does): the sweep runs thousands of
 *                commands, durability is not what it tests, and a real sync
 *                per output would make it four times slower on a disk
 *
 * The kinds and the calls they count (each of them fails with the errno a
 * real failure of that kind gives):
 *   malloc  malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign
 *           (NULL or ENOMEM). glibc calls the interposed malloc from inside
 *           libc too, so fopen's and strdup's allocations count, and so do
 *           jansson's.
 *   write   write, pwrite, pwrite64, writev, fwrite, fputs, fputc, putc,
 *           puts, fprintf, vfprintf, printf, fflush (ENOSPC). glibc's stdio does
 *           not call the interposed write internally, so the stdio calls are
 *           counted themselves. Standard error is never failed: it carries
 *           the message the run must give.
 *   fsync   fsync, fdatasync (EIO)
 *   rename  rename, renameat, renameat2, link, linkat (EIO)
 *   open    open, open64, openat, openat64, fopen, fopen64, fdopen, mkstemp,
 *           mkostemp, mkdtemp, tmpfile (EIO; NULL for the stream calls)
 * Counting starts when the constructor runs, so the dynamic loader's and
 * libc's start-up calls are not numbered; the count is shared by all threads
 * (the driver runs anonkit with one thread so that the numbering repeats).
 *
 * The real functions are found with dlsym(RTLD_NEXT): under AddressSanitizer
 * (loaded ahead of libasan with ASAN_OPTIONS=verify_asan_link_order=0) that
 * is ASan's allocator, so its leak checker sees every failure path. dlsym may
 * itself allocate before the real allocator is known, and so does ASan's
 * start-up (its own dlsym calls, when RTLD_NEXT cannot be resolved yet):
 * such requests are served from a static buffer that free and realloc
 * recognize. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { K_NONE, K_MALLOC, K_WRITE, K_FSYNC, K_RENAME, K_OPEN };

static int g_kind = K_NONE;
static long g_at;                 /* the call to fail, from 1; 0: none */
static long g_calls;              /* calls of g_kind counted so far */
static int g_armed;               /* set by the constructor */
static int g_fake_sync;           /* FAULT_FAKE_SYNC=1 */
static char g_count_file[512];
static char g_log_file[512];

/* ------------------------------------------------ bootstrap allocation --- */

static _Alignas(16) unsigned char g_boot[64 * 1024];
static size_t g_boot_used;
/* Inside dlsym: allocate from g_boot. Volatile: dlsym reaches it only through
 * malloc and free, which the compiler cannot see. Initial-exec: reading it must not call
 * __tls_get_addr, which is not usable yet when the sanitizer runtime starts. */
static __thread volatile int t_resolving __attribute__((tls_model("initial-exec")));

/* A piece of the static buffer for allocations made while dlsym runs. */
static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    size_t at = __atomic_fetch_add(&g_boot_used, n, __ATOMIC_RELAXED);
    if (at + n > sizeof g_boot) return NULL;
    return g_boot + at;
}

/* Whether p is a piece of the static buffer. */
static int is_boot(const void *p)
{
    return (const unsigned char *)p >= g_boot && (const unsigned char *)p < g_boot + sizeof g_boot;
}

/* dlsym(RTLD_NEXT, name) with allocations inside it served by boot_alloc. */
static void *resolve(const char *name)
{
    t_resolving++;
    void *f = dlsym(RTLD_NEXT, name);
    t_resolving--;
    return f;
}

#define REAL(type, name, ...)                                                                       \
    static type (*real_##name)(__VA_ARGS__);                                                       \
    if (!real_##name) real_##name = (type(*)(__VA_ARGS__))resolve(#name)

/* ----------------------------------------------------------- counting --- */

/* Writes TEXT to the file at PATH (appending or not) with raw system calls,
 * so that nothing here is counted or interposed. */
static void put_file(const char *path, const char *text, int append)
{
    if (!path[0]) return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
                          0644);
    if (fd < 0) return;
    (void)syscall(SYS_write, fd, text, strlen(text));
    (void)syscall(SYS_close, fd);
}

/* Counts one call of KIND by the function WHAT; returns 1 when it is the call
 * to fail (its name is then logged). */
static int hit(int kind, const char *what)
{
    if (!g_armed || kind != g_kind || t_resolving) return 0;
    long n = __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    if (n != g_at) return 0;
    char line[128];
    snprintf(line, sizeof line, "%s #%ld\n", what, n);
    put_file(g_log_file, line, 1);
    return 1;
}

/* Reads the environment and starts counting. */
__attribute__((constructor)) static void fault_init(void)
{
    const char *k = getenv("FAULT_KIND");
    if (!k) return;
    static const char *const names[] = {"", "malloc", "write", "fsync", "rename", "open"};
    for (int i = 1; i < 6; i++)
        if (strcmp(k, names[i]) == 0) g_kind = i;
    const char *at = getenv("FAULT_AT");
    g_at = at ? strtol(at, NULL, 10) : 0;
    const char *cf = getenv("FAULT_COUNT_FILE"), *lf = getenv("FAULT_LOG");
    if (cf) snprintf(g_count_file, sizeof g_count_file, "%s", cf);
    if (lf) snprintf(g_log_file, sizeof g_log_file, "%s", lf);
    const char *fake = getenv("FAULT_FAKE_SYNC");
    g_fake_sync = fake && strcmp(fake, "1") == 0;
    g_armed = g_kind != K_NONE;
}

/* Writes the number of calls counted to FAULT_COUNT_FILE. */
__attribute__((destructor)) static void fault_fini(void)
{
    if (!g_armed) return;
    char text[32];
    snprintf(text, sizeof text, "%ld\n", __atomic_load_n(&g_calls, __ATOMIC_RELAXED));
    put_file(g_count_file, text, 0);
}

/* ---------------------------------------------------------- allocation --- */

void *malloc(size_t n)
{
    if (t_resolving) return boot_alloc(n);
    REAL(void *, malloc, size_t);
    if (!real_malloc) return boot_alloc(n); /* (asked while the sanitizer runtime starts, from its dlsym) */
    if (hit(K_MALLOC, "malloc")) {
        errno = ENOMEM;
        return NULL;
    }
    return real_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (t_resolving) return boot_alloc(a * b); /* (zero already: static, never reused) */
    REAL(void *, calloc, size_t, size_t);
    if (!real_calloc) return boot_alloc(a * b);
    if (hit(K_MALLOC, "calloc")) {
        errno = ENOMEM;
        return NULL;
    }
    return real_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (t_resolving) return boot_alloc(n);
    if (p && is_boot(p)) { /* moved out of the static buffer: its size is unknown, what follows it is not */
        const size_t room = (size_t)(g_boot + sizeof g_boot - (unsigned char *)p);
        void *q = malloc(n);
        if (q) memcpy(q, p, n < room ? n : room);
        return q;
    }
    REAL(void *, realloc, void *, size_t);
    if (!real_realloc) return p ? NULL : boot_alloc(n);
    if (n > 0 && hit(K_MALLOC, "realloc")) {
        errno = ENOMEM;
        return NULL;
    }
    return real_realloc(p, n);
}

/* Frees through the real free; the static buffer's pieces are never freed,
 * and neither is what dlsym frees while it resolves free itself (its error
 * text, from the previous lookup), which would otherwise recurse. */
void free(void *p)
{
    if (!p || is_boot(p) || t_resolving) return;
    REAL(void, free, void *);
    if (real_free) real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    REAL(int, posix_memalign, void **, size_t, size_t);
    if (hit(K_MALLOC, "posix_memalign")) return ENOMEM;
    return real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    REAL(void *, aligned_alloc, size_t, size_t);
    if (hit(K_MALLOC, "aligned_alloc")) {
        errno = ENOMEM;
        return NULL;
    }
    return real_aligned_alloc(align, n);
}

void *memalign(size_t align, size_t n)
{
    REAL(void *, memalign, size_t, size_t);
    if (hit(K_MALLOC, "memalign")) {
        errno = ENOMEM;
        return NULL;
    }
    return real_memalign(align, n);
}

/* --------------------------------------------------------------- write --- */

/* Fails a write of fd (never standard error) when it is the chosen call. */
static int write_fails(int fd, const char *what)
{
    if (fd == STDERR_FILENO || !hit(K_WRITE, what)) return 0;
    errno = ENOSPC;
    return 1;
}

/* write_fails for a stream (never stderr). */
static int stream_write_fails(FILE *f, const char *what)
{
    return f && f != stderr && write_fails(fileno(f), what);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(ssize_t, write, int, const void *, size_t);
    if (write_fails(fd, "write")) return -1;
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (write_fails(fd, "pwrite")) return -1;
    return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    if (write_fails(fd, "pwrite64")) return -1;
    return real_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    REAL(ssize_t, writev, int, const struct iovec *, int);
    if (write_fails(fd, "writev")) return -1;
    return real_writev(fd, iov, cnt);
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    REAL(size_t, fwrite, const void *, size_t, size_t, FILE *);
    if (stream_write_fails(f, "fwrite")) return 0;
    return real_fwrite(p, size, n, f);
}

int fputs(const char *s, FILE *f)
{
    REAL(int, fputs, const char *, FILE *);
    if (stream_write_fails(f, "fputs")) return EOF;
    return real_fputs(s, f);
}

int fputc(int c, FILE *f)
{
    REAL(int, fputc, int, FILE *);
    if (stream_write_fails(f, "fputc")) return EOF;
    return real_fputc(c, f);
}

int putc(int c, FILE *f)
{
    REAL(int, putc, int, FILE *);
    if (stream_write_fails(f, "putc")) return EOF;
    return real_putc(c, f);
}

int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    REAL(int, vfprintf, FILE *, const char *, va_list);
    if (stream_write_fails(f, "vfprintf")) return -1;
    return real_vfprintf(f, fmt, ap);
}

int fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return r;
}

int puts(const char *s)
{
    REAL(int, puts, const char *);
    if (stream_write_fails(stdout, "puts")) return EOF;
    return real_puts(s);
}

int fflush(FILE *f)
{
    REAL(int, fflush, FILE *);
    if (stream_write_fails(f, "fflush")) return EOF;
    return real_fflush(f);
}

/* --------------------------------------------------------------- fsync --- */

int fsync(int fd)
{
    REAL(int, fsync, int);
    if (hit(K_FSYNC, "fsync")) {
        errno = EIO;
        return -1;
    }
    if (g_fake_sync) return 0;
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    REAL(int, fdatasync, int);
    if (hit(K_FSYNC, "fdatasync")) {
        errno = EIO;
        return -1;
    }
    if (g_fake_sync) return 0;
    return real_fdatasync(fd);
}

/* -------------------------------------------------------------- rename --- */

int rename(const char *from, const char *to)
{
    REAL(int, rename, const char *, const char *);
    if (hit(K_RENAME, "rename")) {
        errno = EIO;
        return -1;
    }
    return real_rename(from, to);
}

int renameat(int fd1, const char *from, int fd2, const char *to)
{
    REAL(int, renameat, int, const char *, int, const char *);
    if (hit(K_RENAME, "renameat")) {
        errno = EIO;
        return -1;
    }
    return real_renameat(fd1, from, fd2, to);
}

int renameat2(int fd1, const char *from, int fd2, const char *to, unsigned flags)
{
    REAL(int, renameat2, int, const char *, int, const char *, unsigned);
    if (hit(K_RENAME, "renameat2")) {
        errno = EIO;
        return -1;
    }
    return real_renameat2(fd1, from, fd2, to, flags);
}

int link(const char *from, const char *to)
{
    REAL(int, link, const char *, const char *);
    if (hit(K_RENAME, "link")) {
        errno = EIO;
        return -1;
    }
    return real_link(from, to);
}

int linkat(int fd1, const char *from, int fd2, const char *to, int flags)
{
    REAL(int, linkat, int, const char *, int, const char *, int);
    if (hit(K_RENAME, "linkat")) {
        errno = EIO;
        return -1;
    }
    return real_linkat(fd1, from, fd2, to, flags);
}

/* ---------------------------------------------------------------- open --- */

/* The mode argument of open and openat, present when a file may be created. */
#define OPEN_MODE(flags, last)                                                                      \
    mode_t mode = 0;                                                                                \
    if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {                                                          \
        va_list ap;                                                                                 \
        va_start(ap, last);                                                                         \
        mode = (mode_t)va_arg(ap, int);                                                             \
        va_end(ap);                                                                                 \
    }

int open(const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    REAL(int, open, const char *, int, ...);
    if (hit(K_OPEN, "open")) {
        errno = EIO;
        return -1;
    }
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    REAL(int, open64, const char *, int, ...);
    if (hit(K_OPEN, "open64")) {
        errno = EIO;
        return -1;
    }
    return real_open64(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    REAL(int, openat, int, const char *, int, ...);
    if (hit(K_OPEN, "openat")) {
        errno = EIO;
        return -1;
    }
    return real_openat(dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    REAL(int, openat64, int, const char *, int, ...);
    if (hit(K_OPEN, "openat64")) {
        errno = EIO;
        return -1;
    }
    return real_openat64(dir, path, flags, mode);
}

FILE *fopen(const char *path, const char *how)
{
    REAL(FILE *, fopen, const char *, const char *);
    if (hit(K_OPEN, "fopen")) {
        errno = EIO;
        return NULL;
    }
    return real_fopen(path, how);
}

FILE *fopen64(const char *path, const char *how)
{
    REAL(FILE *, fopen64, const char *, const char *);
    if (hit(K_OPEN, "fopen64")) {
        errno = EIO;
        return NULL;
    }
    return real_fopen64(path, how);
}

FILE *fdopen(int fd, const char *how)
{
    REAL(FILE *, fdopen, int, const char *);
    if (hit(K_OPEN, "fdopen")) {
        errno = EIO;
        return NULL;
    }
    return real_fdopen(fd, how);
}

int mkstemp(char *tmpl)
{
    REAL(int, mkstemp, char *);
    if (hit(K_OPEN, "mkstemp")) {
        errno = EIO;
        return -1;
    }
    return real_mkstemp(tmpl);
}

int mkostemp(char *tmpl, int flags)
{
    REAL(int, mkostemp, char *, int);
    if (hit(K_OPEN, "mkostemp")) {
        errno = EIO;
        return -1;
    }
    return real_mkostemp(tmpl, flags);
}

char *mkdtemp(char *tmpl)
{
    REAL(char *, mkdtemp, char *);
    if (hit(K_OPEN, "mkdtemp")) {
        errno = EIO;
        return NULL;
    }
    return real_mkdtemp(tmpl);
}

FILE *tmpfile(void)
{
    REAL(FILE *, tmpfile, void);
    if (hit(K_OPEN, "tmpfile")) {
        errno = EIO;
        return NULL;
    }
    return real_tmpfile();
}
