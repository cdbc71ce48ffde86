/* test_hostile_io.c — what hostile input and hostile ends of a run must not
 * do: a hierarchy label naming two nodes, numbers that are no decimal numbers
 * (src/core/hierarchy.c, src/core/numdict.c), and temporary files left behind
 * by a killed process or a failed commit (src/io/spool.c, src/io/outfile.c).
 *
 * Expected values come from the definitions in hierarchy.h, numdict.h,
 * spool.h and outfile.h: the lines a message must name are those of the rows
 * written here, the modes are 0666 less the umask or the old file's mode, and
 * "nothing left behind" is a folder listing equal to the one taken before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/numparse.h"
#include "core/hierarchy.h"
#include "core/numdict.h"
#include "io/outfile.h"
#include "io/spool.h"
#include "testutil.h"

/* ------------------------------------------------------------ helpers */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in a folder (but . and ..), sorted, one per line, malloc'd. */
static char *listing(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot list %s: %s", dir, strerror(errno));
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        assert_true(n < 256);
        names[n] = strdup(e->d_name);
        assert_non_null(names[n]);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    size_t len = 1;
    for (size_t i = 0; i < n; i++) len += strlen(names[i]) + 1;
    char *out = malloc(len);
    assert_non_null(out);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(out, names[i]);
        strcat(out, "\n");
        free(names[i]);
    }
    return out;
}

/* Asserts that a folder holds exactly the names of `before`. */
static void assert_listing(const char *dir, const char *before)
{
    char *now = listing(dir);
    if (strcmp(now, before) != 0) fail_msg("%s holds\n%s\ninstead of\n%s", dir, now, before);
    free(now);
}

/* A fresh private folder (its path stays valid until the group ends). */
static const char *fresh_dir(const char *name)
{
    const char *dir = tu_path(tu_group_dir, name);
    if (mkdir(dir, 0700) != 0) fail_msg("mkdir %s: %s", dir, strerror(errno));
    static char kept[16][4096];
    static int next;
    char *slot = kept[next++ % 16];
    snprintf(slot, 4096, "%s", dir);
    return slot;
}

/* Reads a whole file and compares it with `want`. */
static void assert_file_is(const char *path, const char *want)
{
    char *got = tu_read_file(path, NULL);
    if (!got) fail_msg("%s is missing", path);
    assert_string_equal(got, want);
    free(got);
}

/* The permission bits of a file. */
static mode_t mode_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) fail_msg("stat %s: %s", path, strerror(errno));
    return st.st_mode & 07777;
}

/* Kills a child with `sig` and reaps it; it must have died of that signal. */
static void kill_child(pid_t pid, int sig)
{
    assert_int_equal(kill(pid, sig), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
}

/* ------------------------------------------------------------ hierarchies (issue 21, defect 5) */

/* Loads a hierarchy that must be refused; returns the error. */
static ak_error hier_refused(const char *name, const char *text)
{
    const char *path = tu_path(tu_group_dir, name);
    tu_write_file(path, text);
    hier *h = (hier *)1;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(hier_load(&h, path, &err), ANONKIT_E_INPUT);
    assert_null(h);
    assert_string_equal(err.file, path);
    return err;
}

static void hier_accepted(const char *path)
{
    hier *h = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (hier_load(&h, path, &err) != ANONKIT_OK) {
        char buf[2048];
        ak_err_format(&err, buf, sizeof buf);
        fail_msg("%s was refused: %s", path, buf);
    }
    hier_free(h);
}

/* A label that is a leaf on one line and a node above other leaves on
 * another: refused, the error on one line and naming the other. */
static void test_label_on_two_levels(void **state)
{
    (void)state;
    /* HS is the level-2 node above BSc (line 1) and a leaf (line 2). */
    ak_error err = hier_refused("hs.csv", "BSc;Uni;HS\nHS;School;HS\n");
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "\"HS\""));
    assert_non_null(strstr(err.message, "line 2"));
    char buf[2048];
    ak_err_format(&err, buf, sizeof buf);
    char want[1024];
    snprintf(want, sizeof want, "%s:1:", tu_path(tu_group_dir, "hs.csv"));
    assert_non_null(strstr(buf, want));

    /* The issue's own file: HS on the same line twice, the level-2 HS covers BSc too. */
    err = hier_refused("hs2.csv", "HS;School;HS\nBSc;Uni;HS\n");
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "line 1"));

    /* A level-1 label (line 1, above a) that is also a leaf (line 3). */
    err = hier_refused("mid.csv", "a;HS;*\nb;X;*\nHS;X;*\n");
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "line 3"));

    /* One label at levels 1 and 2, above different leaves (lines 2 and 1). */
    err = hier_refused("up.csv", "a;P;Q;*\nb;Q;R;*\n");
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "line 2"));

    /* Same level, different ancestry: the label's two parents, both lines. */
    err = hier_refused("anc.csv", "a;M;P;*\nb;N;Q;*\nc;M;Q;*\n");
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.message, "line 1"));

    /* "*" inside the tree while a root "*" is added above two top labels. */
    err = hier_refused("star.csv", "a;*\nb;B\n");
    assert_int_equal(err.line, 1);
}

/* The same node on many rows, and a leaf padded upwards under its own
 * label, are one node each: accepted, as are the shipped ARX files. */
static void test_label_repeats_accepted(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "ok1.csv");
    tu_write_file(path, "a;School;*\nb;School;*\nc;Uni;*\n");
    hier_accepted(path);
    path = tu_path(tu_group_dir, "ok2.csv");
    tu_write_file(path, "Male;Male;*\nFemale;Female;*\n");
    hier_accepted(path);
    path = tu_path(tu_group_dir, "ok3.csv");
    tu_write_file(path, "x;x;x\n");
    hier_accepted(path);
    static const char *const shipped[] = {
        "examples/adult/adult_hierarchy_age.csv",        "examples/adult/adult_hierarchy_education.csv",
        "examples/adult/adult_hierarchy_marital-status.csv", "examples/adult/adult_hierarchy_native-country.csv",
        "examples/adult/adult_hierarchy_occupation.csv", "examples/adult/adult_hierarchy_race.csv",
        "examples/adult/adult_hierarchy_salary-class.csv", "examples/adult/adult_hierarchy_sex.csv",
        "examples/adult/adult_hierarchy_workclass.csv",  "tests/data/hier_age.csv",
        "tests/data/hier_education.csv",                 "tests/data/hier_native_country.csv",
        "tests/data/hier_workclass.csv",
    };
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
        hier_accepted(tu_path(ANONKIT_SOURCE_DIR, shipped[i]));
}

/* ------------------------------------------------------------ numbers */

/* numdict.h: an optional sign, digits with an optional fraction, an optional
 * exponent; nothing else. */
static void test_numbers_decimal_only(void **state)
{
    (void)state;
    static const char *const refused[] = {"0x1A", "0X1a", "inf", "-inf", "INF", "infinity", "nan", "NaN", "1e",
                                          "1e+", "e5", "--1", "+-1", " 1", "1 ", "\t1", "", ".", "-", "+", "1..2",
                                          "1,5", "0x1p3", "1e400", "-1e400", "12a", "1_000"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        double v = 42;
        if (ak_num_parse(refused[i], strlen(refused[i]), &v) != -1) fail_msg("'%s' was accepted", refused[i]);
        /* decimal in form but beyond a double: refused by the parse alone */
        const int in_form = !strcmp(refused[i], "1e400") || !strcmp(refused[i], "-1e400");
        assert_int_equal(ak_num_is_decimal(refused[i], strlen(refused[i])), in_form);
    }
    static const struct {
        const char *text;
        double value;
    } accepted[] = {{"-3", -3.0},     {"2.50", 2.5},        {"1e5", 100000.0}, {"+7", 7.0},     {".5", 0.5},
                    {"5.", 5.0},      {"-1.25E-2", -0.0125}, {"0", 0.0},       {"-0", 0.0},     {"007", 7.0},
                    {"1E+3", 1000.0}, {"12345678901234567", 12345678901234567.0}};
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
        double v = 42;
        if (ak_num_parse(accepted[i].text, strlen(accepted[i].text), &v) != 0)
            fail_msg("'%s' was refused", accepted[i].text);
        assert_true(v == accepted[i].value);
        assert_true(ak_num_is_decimal(accepted[i].text, strlen(accepted[i].text)));
    }
    /* A field is parsed by its length, not up to a NUL. */
    double v;
    assert_int_equal(ak_num_parse("12x", 2, &v), 0);
    assert_true(v == 12.0);
}

/* The command refuses 0x1A in a numeric QI with exit status 1, names the
 * line, and writes nothing at -o. */
static void test_cli_refuses_hex(void **state)
{
    (void)state;
    const char *dir = fresh_dir("cli");
    char in[4096], out[4096], errf[4200], cmd[16384];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(errf, sizeof errf, "%s/stderr.txt", tu_group_dir);
    tu_write_file(in, "id,age,s\n1,19,x\n2,0x1A,y\n3,30,x\n4,31,y\n");
    char *before = listing(dir);
    snprintf(cmd, sizeof cmd, "'%s' anonymize '%s' --qi age --sensitive s --k 2 -o '%s' >/dev/null 2>'%s'",
             ANONKIT_BINARY, in, out, errf);
    const int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    char *msg = tu_read_file(errf, NULL);
    assert_non_null(msg);
    char want[4200];
    snprintf(want, sizeof want, "%s:3:", in);
    if (!strstr(msg, want) || !strstr(msg, "0x1A")) fail_msg("the message does not name line 3 and 0x1A: %s", msg);
    free(msg);
    assert_listing(dir, before); /* no out.csv, no temporary */
    free(before);
}

/* The command refuses the hierarchy (exit status 1, both lines
 * named) and writes nothing at -o. */
static void test_cli_refuses_label_reuse(void **state)
{
    (void)state;
    const char *dir = fresh_dir("clihier");
    char in[4200], hier_path[4200], out[4200], errf[4200], cmd[20000];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(hier_path, sizeof hier_path, "%s/edu.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(errf, sizeof errf, "%s/stderr2.txt", tu_group_dir);
    tu_write_file(in, "id,edu,s\n1,HS,a\n2,BSc,b\n3,HS,a\n4,BSc,b\n");
    tu_write_file(hier_path, "BSc;Uni;HS\nHS;School;HS\n");
    char *before = listing(dir);
    snprintf(cmd, sizeof cmd, "'%s' anonymize '%s' --qi edu --hierarchy 'edu=%s' --k 2 -o '%s' >/dev/null 2>'%s'",
             ANONKIT_BINARY, in, hier_path, out, errf);
    const int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    char *msg = tu_read_file(errf, NULL);
    assert_non_null(msg);
    char want[4300];
    snprintf(want, sizeof want, "%s:1:", hier_path);
    if (!strstr(msg, want) || !strstr(msg, "line 2")) fail_msg("the message does not name lines 1 and 2: %s", msg);
    free(msg);
    assert_listing(dir, before);
    free(before);
}

/* ------------------------------------------------------------ spool (defect 6) */

/* A pipe's read end as a stream, its write end in *wfd. */
static FILE *pipe_stream(int *wfd)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    *wfd = fds[1];
    FILE *f = fdopen(fds[0], "rb");
    assert_non_null(f);
    return f;
}

/* Writes all of buf to fd. */
static void write_fd(int fd, const char *buf, size_t len)
{
    while (len) {
        const ssize_t w = write(fd, buf, len);
        assert_true(w > 0);
        buf += w;
        len -= (size_t)w;
    }
}

/* The copy reads back through its path, and its folder holds nothing, while
 * spooled and after spool_remove. */
static void test_spool_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("spool");
    char *before = listing(dir);
    FILE *in = tmpfile();
    assert_non_null(in);
    const char *text = "id,age\n1,19\n2,20\n";
    assert_int_equal(fputs(text, in) >= 0, 1);
    rewind(in);
    spool s;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(spool_stream_in(&s, in, dir, &err), ANONKIT_OK);
    fclose(in);
    assert_listing(dir, before);
    assert_file_is(s.path, text);
    assert_file_is(s.path, text); /* each reader opens it afresh, at its start */
    spool_remove(&s);
    assert_listing(dir, before);
    spool_remove(&s); /* twice is harmless, as on a zeroed spool */
    spool z;
    memset(&z, 0, sizeof z);
    spool_remove(&z);

    /* The folder given is the one used: a missing one fails. */
    in = tmpfile();
    assert_non_null(in);
    assert_int_equal(spool_stream_in(&s, in, tu_path(dir, "missing"), &err), ANONKIT_E_IO);
    /* Without one, $TMPDIR. */
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("TMPDIR", tu_path(dir, "missing"), 1), 0);
    rewind(in);
    assert_int_equal(spool_stream(&s, in, &err), ANONKIT_E_IO);
    assert_int_equal(setenv("TMPDIR", dir, 1), 0);
    rewind(in);
    assert_int_equal(spool_stream(&s, in, &err), ANONKIT_OK);
    assert_listing(dir, before);
    spool_remove(&s);
    if (saved) setenv("TMPDIR", saved, 1);
    else unsetenv("TMPDIR");
    free(saved);
    fclose(in);
    free(before);
}

/* A process killed while spooling (stdin still open, part of it copied)
 * or after it leaves nothing in the folder. */
static void test_spool_killed(void **state)
{
    (void)state;
    static const int sigs[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP};
    const char *dir = fresh_dir("spoolkill");
    char *before = listing(dir);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    chunk[sizeof chunk - 1] = '\n';
    for (size_t i = 0; i < 2 * sizeof sigs / sizeof *sigs; i++) {
        const int mid = i % 2 == 0; /* killed mid-copy, or with the copy made */
        int wfd, ready[2];
        FILE *in = pipe_stream(&wfd);
        assert_int_equal(pipe(ready), 0);
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(wfd);
            close(ready[0]);
            spool s;
            ak_error err;
            if (spool_stream_in(&s, in, dir, &err) != ANONKIT_OK) _exit(3);
            if (write(ready[1], "r", 1) != 1) _exit(4);
            for (;;) pause();
        }
        fclose(in);
        close(ready[1]);
        /* 1 MB through a pipe of 64 kB: when the writes return, the child has copied most of it. */
        for (int k = 0; k < 256; k++) write_fd(wfd, chunk, sizeof chunk);
        if (!mid) {
            close(wfd);
            char c;
            assert_int_equal(read(ready[0], &c, 1), 1);
        }
        assert_listing(dir, before);
        kill_child(pid, sigs[i / 2]);
        if (mid) close(wfd);
        close(ready[0]);
        assert_listing(dir, before);
    }
    free(before);
}

/* ------------------------------------------------------------ outfile (defects 7 and 2) */

/* Opens, writes and commits one outfile. */
static void write_out(const char *path, const char *text)
{
    outfile o;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(outfile_open(&o, path, &err), ANONKIT_OK);
    assert_true(fputs(text, o.stream) >= 0);
    if (outfile_commit(&o, &err) != ANONKIT_OK) fail_msg("commit failed: %s", err.message);
}

/* A child that opened an outfile and wrote is killed: nothing new in the
 * destination's folder, an old destination unchanged. */
static void test_outfile_killed(void **state)
{
    (void)state;
    static const int sigs[] = {SIGKILL, SIGTERM, SIGINT};
    const char *dir = fresh_dir("outkill");
    char old[4096];
    snprintf(old, sizeof old, "%s/old.csv", dir);
    tu_write_file(old, "old\n");
    char *before = listing(dir);
    char chunk[4096];
    memset(chunk, 'y', sizeof chunk);
    for (size_t i = 0; i < 2 * sizeof sigs / sizeof *sigs; i++) {
        char dest[4096];
        snprintf(dest, sizeof dest, "%s/%s", dir, i % 2 ? "old.csv" : "new.csv");
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            outfile o;
            ak_error err;
            if (outfile_open(&o, dest, &err) != ANONKIT_OK) _exit(3);
            for (int k = 0; k < 64; k++)
                if (fwrite(chunk, 1, sizeof chunk, o.stream) != sizeof chunk) _exit(4);
            if (fflush(o.stream) != 0) _exit(5);
            if (write(ready[1], "w", 1) != 1) _exit(6);
            for (;;) pause();
        }
        close(ready[1]);
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        kill_child(pid, sigs[i / 2]);
        assert_listing(dir, before);
        assert_file_is(old, "old\n");
    }
    free(before);
}

/* A new output gets 0666 less the umask; an existing one keeps its mode. */
static void test_outfile_modes(void **state)
{
    (void)state;
    const char *dir = fresh_dir("modes");
    const mode_t saved = umask(027);
    char path[4096];
    snprintf(path, sizeof path, "%s/a.csv", dir);
    write_out(path, "a\n");
    assert_int_equal(mode_of(path), 0640);
    assert_file_is(path, "a\n");
    snprintf(path, sizeof path, "%s/b.csv", dir);
    umask(077);
    write_out(path, "b\n");
    assert_int_equal(mode_of(path), 0600);
    umask(022);
    write_out(path, "b2\n"); /* an existing 0600 output stays 0600 */
    assert_int_equal(mode_of(path), 0600);
    assert_file_is(path, "b2\n");
    assert_int_equal(chmod(path, 0640), 0);
    write_out(path, "b3\n"); /* 0640 is no mode the umask 022 would give */
    assert_int_equal(mode_of(path), 0640);
    umask(saved);
    /* Nothing but the two outputs. */
    assert_listing(dir, "a.csv\nb.csv\n");
    /* A folder as the destination is refused at open. */
    outfile o;
    ak_error err;
    assert_int_equal(outfile_open(&o, dir, &err), ANONKIT_E_IO);
}

/* Opens outfiles on paths[i] (NULL: left zeroed) and writes texts[i]. */
static void open_group(outfile *o, const char *const *paths, const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memset(&o[i], 0, sizeof o[i]);
        if (!paths[i]) continue;
        ak_error err;
        if (outfile_open(&o[i], paths[i], &err) != ANONKIT_OK) fail_msg("open %s: %s", paths[i], err.message);
        assert_true(fputs(texts[i], o[i].stream) >= 0);
    }
}

/* The outputs of a run are committed together: all of them, or (when one
 * fails before the renames) none, leaving no temporary. */
static void test_outfile_group_commit(void **state)
{
    (void)state;
    const char *dir = fresh_dir("group");
    char a[4096], b[4096], sub[4096], c[4200];
    snprintf(a, sizeof a, "%s/table.csv", dir);
    snprintf(b, sizeof b, "%s/report.json", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(c, sizeof c, "%s/rules.csv", sub);
    tu_write_file(a, "old table\n");
    tu_write_file(b, "old report\n");
    assert_int_equal(mkdir(sub, 0700), 0);
    char *before = listing(dir);
    outfile o[4];
    outfile *list[5] = {&o[0], &o[1], &o[2], &o[3], NULL};
    ak_error err;

    /* The last one cannot be written (/dev/full): none is renamed. */
    const char *full[] = {a, b, "/dev/full", NULL};
    const char *texts[] = {"new table\n", "new report\n", "new rules\n", ""};
    open_group(o, full, texts, 4);
    assert_int_equal(outfile_commit_all(list, 5, 0, &err), ANONKIT_E_IO);
    assert_listing(dir, before);
    assert_file_is(a, "old table\n");
    assert_file_is(b, "old report\n");
    for (int i = 0; i < 4; i++) assert_null(o[i].stream);

    /* The first one's folder is removed under it: none is renamed. */
    const char *gone[] = {c, a, b, NULL};
    open_group(o, gone, texts, 4);
    tu_rmtree(sub);
    assert_int_equal(outfile_commit_all(list, 5, 1, &err), ANONKIT_E_IO);
    assert_file_is(a, "old table\n");
    assert_file_is(b, "old report\n");
    assert_listing(dir, "report.json\ntable.csv\n");

    /* All can be written: all are renamed, in place of the old files. */
    assert_int_equal(mkdir(sub, 0700), 0);
    open_group(o, gone, texts, 4);
    assert_int_equal(outfile_commit_all(list, 5, 0, &err), ANONKIT_OK);
    assert_file_is(c, "new table\n");
    assert_file_is(a, "new report\n");
    assert_file_is(b, "new rules\n");
    assert_listing(dir, before);
    assert_listing(sub, "rules.csv\n");
    for (int i = 0; i < 4; i++) outfile_abort(&o[i]); /* harmless after a commit */

    /* A rename that fails after others were done: those are put back (an old
     * file as it was, a new one removed) and no second name is left. */
    tu_write_file(a, "old table\n");
    tu_write_file(b, "old report\n");
    tu_rmtree(sub);
    char fresh[4200];
    snprintf(fresh, sizeof fresh, "%s/fresh.csv", dir);
    const char *late[] = {a, fresh, b, NULL};
    open_group(o, late, texts, 4);
    remove(b);
    assert_int_equal(mkdir(b, 0700), 0); /* the last destination became a folder: its rename fails */
    assert_int_equal(outfile_commit_all(list, 5, 1, &err), ANONKIT_E_IO);
    assert_file_is(a, "old table\n");
    assert_listing(dir, "report.json\ntable.csv\n");
    for (int i = 0; i < 4; i++) assert_null(o[i].stream);
    assert_int_equal(rmdir(b), 0);
    free(before);
}

/* The names created in a folder (inotify: IN_CREATE and IN_MOVED_TO) while
 * one outfile is committed with `text` at path, one per line. */
static void names_made_by_commit(const char *dir, const char *path, const char *text, char *out, size_t cap)
{
    outfile o;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(outfile_open(&o, path, &err), ANONKIT_OK);
    assert_true(fputs(text, o.stream) >= 0);
    const int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(in >= 0);
    assert_true(inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO) >= 0);
    if (outfile_commit(&o, &err) != ANONKIT_OK) fail_msg("commit failed: %s", err.message);
    _Alignas(struct inotify_event) char buf[8192];
    out[0] = '\0';
    const ssize_t got = read(in, buf, sizeof buf);
    for (ssize_t at = 0; got > 0 && at < got;) {
        const struct inotify_event *e = (const struct inotify_event *)(buf + at);
        if (e->len && strlen(out) + strlen(e->name) + 2 < cap) {
            strcat(out, e->name);
            strcat(out, "\n");
        }
        at += (ssize_t)(sizeof *e + e->len);
    }
    close(in);
}

/* A new output is linked straight to its name: no temporary name ever
 * exists in its folder, so no signal can leave one. Replacing an old output
 * still names the finished file DEST.tmp-XXXXXX for the rename (and nothing
 * is left of it). A file that appears at a new output's path during the run
 * is not replaced: the commit fails and leaves it. */
static void test_outfile_names(void **state)
{
    (void)state;
    const char *dir = fresh_dir("names");
    char path[4096], made[1024];
    snprintf(path, sizeof path, "%s/new.csv", dir);
    names_made_by_commit(dir, path, "first\n", made, sizeof made);
    assert_string_equal(made, "new.csv\n");
    assert_file_is(path, "first\n");
    names_made_by_commit(dir, path, "second\n", made, sizeof made);
    if (strncmp(made, "new.csv.tmp-", 12) != 0 || strlen(made) != 27 || strcmp(made + 18, "\nnew.csv\n") != 0)
        fail_msg("replacing: names made\n%s", made);
    assert_file_is(path, "second\n");
    assert_listing(dir, "new.csv\n");

    snprintf(path, sizeof path, "%s/raced.csv", dir);
    outfile o;
    ak_error err;
    assert_int_equal(outfile_open(&o, path, &err), ANONKIT_OK);
    assert_true(fputs("ours\n", o.stream) >= 0);
    tu_write_file(path, "theirs\n");
    assert_int_equal(outfile_commit(&o, &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "appeared"));
    assert_file_is(path, "theirs\n");
    assert_listing(dir, "new.csv\nraced.csv\n");
}

/* ------------------------------------------------------------ the command, killed */

/* Runs the command with argv (argv[0] unused) and TMPDIR=tmpdir, stdin from
 * stdin_path, sends it `sig` after delay_us microseconds and returns its wait
 * status. */
static int run_and_kill(char *const argv[], const char *stdin_path, const char *tmpdir, int sig, long delay_us)
{
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const int in = open(stdin_path, O_RDONLY);
        const int null = open("/dev/null", O_WRONLY);
        if (in < 0 || null < 0 || dup2(in, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(126);
        if (setenv("TMPDIR", tmpdir, 1) != 0) _exit(126);
        execv(ANONKIT_BINARY, argv);
        _exit(127);
    }
    const struct timespec delay = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    if (delay_us) nanosleep(&delay, NULL);
    kill(pid, sig); /* it may have finished already */
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* anonymize from stdin and generate, killed at several points of their run
 * by each signal: afterwards the output folder holds the old output (or,
 * when the run finished first, the complete new one) and nothing else, and
 * the temporary folder (TMPDIR, where stdin is spooled) holds nothing. */
static void test_cli_killed(void **state)
{
    (void)state;
    const char *dir = fresh_dir("clikill");
    const char *tmp = fresh_dir("clikill-tmp");
    char input[4200], out[4200], ref[4200], gref[4200], cmd[16384];
    snprintf(input, sizeof input, "%s/in.csv", tu_group_dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(ref, sizeof ref, "%s/ref.csv", tu_group_dir);
    snprintf(gref, sizeof gref, "%s/gref.csv", tu_group_dir);
    snprintf(cmd, sizeof cmd, "'%s' generate --rows 200000 --seed 3 -o '%s' 2>/dev/null", ANONKIT_BINARY, input);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "'%s' generate --rows 1000000 --seed 5 -o '%s' 2>/dev/null", ANONKIT_BINARY, gref);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "'%s' anonymize - --qi age,zipcode,salary --k 5 --seed 1 -o '%s' <'%s' >/dev/null 2>&1",
             ANONKIT_BINARY, ref, input);
    assert_int_equal(system(cmd), 0);
    char *want_anon = tu_read_file(ref, NULL), *want_gen = tu_read_file(gref, NULL);
    assert_non_null(want_anon);
    assert_non_null(want_gen);
    char *anon_argv[] = {"anonkit", "anonymize", "-", "--qi", "age,zipcode,salary", "--k", "5", "--seed", "1",
                         "-o", out, NULL};
    char *gen_argv[] = {"anonkit", "generate", "--rows", "1000000", "--seed", "5", "-o", out, NULL};
    static const int sigs[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP};
    static const long delays[] = {0, 2000, 10000, 30000, 80000, 200000};
    int killed = 0, finished = 0;
    for (int which = 0; which < 2; which++) {
        for (size_t si = 0; si < sizeof sigs / sizeof *sigs; si++) {
            for (size_t di = 0; di < sizeof delays / sizeof *delays; di++) {
                tu_write_file(out, "old\n");
                const int status = run_and_kill(which ? gen_argv : anon_argv, input, tmp, sigs[si], delays[di]);
                assert_listing(dir, "out.csv\n");
                assert_listing(tmp, "");
                char *got = tu_read_file(out, NULL);
                assert_non_null(got);
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                    if (strcmp(got, which ? want_gen : want_anon) != 0)
                        fail_msg("a finished run left another output (signal %d, %ld us)", sigs[si], delays[di]);
                    finished++;
                } else {
                    /* the old output, or the complete new one when the signal
                     * came between the rename and the end of the process */
                    if (strcmp(got, "old\n") != 0 && strcmp(got, which ? want_gen : want_anon) != 0)
                        fail_msg("a killed run left a changed output (signal %d, %ld us)", sigs[si], delays[di]);
                    killed++;
                }
                free(got);
            }
        }
    }
    assert_true(killed > 0); /* the runs were in fact interrupted, not only finished */
    print_message("%d runs killed, %d finished before the signal\n", killed, finished);
    free(want_anon);
    free(want_gen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_on_two_levels),
        cmocka_unit_test(test_label_repeats_accepted),
        cmocka_unit_test(test_numbers_decimal_only),
        cmocka_unit_test(test_cli_refuses_hex),
        cmocka_unit_test(test_cli_refuses_label_reuse),
        cmocka_unit_test(test_spool_leaves_nothing),
        cmocka_unit_test(test_spool_killed),
        cmocka_unit_test(test_outfile_killed),
        cmocka_unit_test(test_outfile_modes),
        cmocka_unit_test(test_outfile_group_commit),
        cmocka_unit_test(test_outfile_names),
        cmocka_unit_test(test_cli_killed),
    };
    signal(SIGPIPE, SIG_IGN); /* a child that died early fails a write, not the whole program */
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
