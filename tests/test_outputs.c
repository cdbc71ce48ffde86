/* test_outputs.c — what a run of the command does to the files around it,
 * seen from outside (ANONKIT_BINARY, table-driven):
 *
 * - the table, the report and the rules are committed together: when one of
 *   them cannot be written (/dev/full, a folder) the run fails and every old
 *   output is byte-identical afterwards;
 * - no path a run writes is a path it reads (input, hierarchy, earlier
 *   release, rules of recode, inconsistency file, job file) or another path
 *   it writes, whatever the spelling (./, .., a symbolic or a hard link):
 *   such a run is refused before any work, exit 1, nothing changed;
 * - standard input is spooled under --tmpdir, not under $TMPDIR (anonymize,
 *   check, metrics, sequential). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

/* The fixture folder: a small table, its hierarchy, the sequential releases
 * and old outputs, all copies (a broken refusal must not harm the sources). */
static char dir[4200];

/* Appends text to a growing buffer (aborts the test when out of memory). */
static void append(char **buf, size_t *len, const char *text, size_t n)
{
    char *grown = realloc(*buf, *len + n + 1);
    assert_non_null(grown);
    memcpy(grown + *len, text, n);
    *len += n;
    grown[*len] = '\0';
    *buf = grown;
}

/* Every entry of folder `path` (one level down too), sorted by readdir order
 * made stable by sorting names: name, kind and the whole content of regular
 * files, the target of symbolic links. Equal snapshots: nothing changed. */
static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }
static void snapshot_into(const char *path, char **buf, size_t *len)
{
    struct dirent **names = NULL;
    const int n = scandir(path, &names, NULL, by_name);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") && strcmp(name, "..")) {
            char full[8300], line[8400];
            snprintf(full, sizeof full, "%s/%s", path, name);
            struct stat st;
            assert_int_equal(lstat(full, &st), 0);
            snprintf(line, sizeof line, "== %s mode %o size %lld\n", full, (unsigned)st.st_mode, (long long)st.st_size);
            append(buf, len, line, strlen(line));
            if (S_ISREG(st.st_mode)) {
                size_t n_bytes = 0;
                char *content = tu_read_file(full, &n_bytes);
                assert_non_null(content);
                append(buf, len, content, n_bytes);
                free(content);
            } else if (S_ISLNK(st.st_mode)) {
                char target[4096];
                const ssize_t t = readlink(full, target, sizeof target);
                assert_true(t >= 0);
                append(buf, len, target, (size_t)t);
            } else if (S_ISDIR(st.st_mode)) {
                snapshot_into(full, buf, len);
            }
        }
        free(names[i]);
    }
    free(names);
}

static char *snapshot(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    append(&buf, &len, "", 0);
    snapshot_into(path, &buf, &len);
    return buf;
}

/* Replacements of @NAME@ tokens besides @BIN@ (the binary) and @D@ (the
 * fixture folder): name[i] becomes value[i], unquoted. */
typedef struct tokens {
    const char *name[4], *value[4];
} tokens;

/* The template with its @NAME@ tokens replaced. */
static void expand(const char *template, const tokens *t, char *out, size_t size)
{
    size_t used = 0;
    for (const char *p = template; *p;) {
        const char *repl = NULL;
        size_t skip = 0;
        int quote = 1;
        if (!strncmp(p, "@BIN@", 5)) repl = ANONKIT_BINARY, skip = 5;
        else if (!strncmp(p, "@D@", 3)) repl = dir, skip = 3;
        for (int i = 0; !repl && t && i < 4 && t->name[i]; i++)
            if (!strncmp(p, t->name[i], strlen(t->name[i]))) repl = t->value[i], skip = strlen(t->name[i]), quote = 0;
        if (repl) {
            used += (size_t)snprintf(out + used, size - used, quote ? "'%s'" : "%s", repl);
            p += skip;
        } else {
            if (used + 1 < size) out[used++] = *p;
            p++;
        }
        assert_true(used + 1 < size);
    }
    out[used] = '\0';
}

/* Runs the expanded command through sh in the fixture folder, stderr into
 * *err (malloc'd); returns its exit status (-1 when it did not exit). */
static int run_with(const char *template, const tokens *t, char **err)
{
    char cmd[32768], errpath[4200], full[32768 + 8500];
    expand(template, t, cmd, sizeof cmd);
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", tu_group_dir);
    snprintf(full, sizeof full, "cd '%s' && { %s ; } >/dev/null 2>'%s'", dir, cmd, errpath);
    const int status = system(full);
    *err = tu_read_file(errpath, NULL);
    assert_non_null(*err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Removes fixture file `name` (which must exist). */
static void remove_file(const char *name)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (unlink(path) != 0) fail_msg("%s was not written", path);
}

/* Copies file src to dst. */
static void copy_file(const char *src, const char *dst)
{
    char *text = tu_read_file(src, NULL);
    if (!text) fail_msg("cannot read %s", src);
    tu_write_file(dst, text);
    free(text);
}

/* Builds the fixture in a fresh folder under the group's folder. */
static int fixture_setup(void **state)
{
    if (tu_group_setup(state)) return -1;
    snprintf(dir, sizeof dir, "%s/fx", tu_group_dir);
    if (mkdir(dir, 0700) != 0) return -1;
    char path[4300];
    tu_rng rng = {11};
    char *text = malloc(64 * 220);
    if (!text) return -1;
    size_t used = (size_t)sprintf(text, "id,age,edu,disease\n");
    static const char *const edu[] = {"HS", "BSc", "MSc", "PhD"};
    static const char *const disease[] = {"flu", "cold", "asthma"};
    for (int r = 0; r < 200; r++)
        used += (size_t)sprintf(text + used, "%d,%u,%s,%s\n", r, 20 + (unsigned)tu_below(&rng, 50),
                                edu[tu_below(&rng, 4)], disease[tu_below(&rng, 3)]);
    snprintf(path, sizeof path, "%s/in.csv", dir);
    tu_write_file(path, text);
    free(text);
    snprintf(path, sizeof path, "%s/edu.csv", dir);
    tu_write_file(path, "HS;School;*\nBSc;Uni;*\nMSc;Uni;*\nPhD;Uni;*\n");
    snprintf(path, sizeof path, "%s/incons.csv", dir);
    tu_write_file(path, "Job,Banker,Job,Clerk\n");
    snprintf(path, sizeof path, "%s/job.json", dir);
    tu_write_file(path, "{\"k\": 3}\n");
    static const char *const releases[] = {"t1.csv", "t2.csv", "job.csv", "name.csv"};
    for (size_t i = 0; i < sizeof releases / sizeof *releases; i++) {
        char src[4300];
        snprintf(src, sizeof src, "%s/tests/data/sequential/%s", ANONKIT_SOURCE_DIR, releases[i]);
        snprintf(path, sizeof path, "%s/seq-%s", dir, releases[i]);
        copy_file(src, path);
    }
    /* old outputs, a folder, and links to the input and to the old output */
    snprintf(path, sizeof path, "%s/out.csv", dir);
    tu_write_file(path, "OLD TABLE\n");
    snprintf(path, sizeof path, "%s/r.json", dir);
    tu_write_file(path, "OLD REPORT\n");
    snprintf(path, sizeof path, "%s/rules.csv", dir);
    tu_write_file(path, "OLD RULES\n");
    snprintf(path, sizeof path, "%s/folder", dir);
    if (mkdir(path, 0700) != 0) return -1;
    char target[4300];
    snprintf(path, sizeof path, "%s/in-symlink.csv", dir);
    if (symlink("in.csv", path) != 0) return -1;
    snprintf(target, sizeof target, "%s/in.csv", dir);
    snprintf(path, sizeof path, "%s/in-hardlink.csv", dir);
    if (link(target, path) != 0) return -1;
    snprintf(path, sizeof path, "%s/out-symlink.csv", dir);
    if (symlink("out.csv", path) != 0) return -1;
    snprintf(target, sizeof target, "%s/out.csv", dir);
    snprintf(path, sizeof path, "%s/out-hardlink.csv", dir);
    if (link(target, path) != 0) return -1;
    snprintf(target, sizeof target, "%s/edu.csv", dir);
    snprintf(path, sizeof path, "%s/edu-hardlink.csv", dir);
    if (link(target, path) != 0) return -1;
    /* valid rules for recode, and the table they come with */
    char cmd[20000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' anonymize in.csv --qi age,edu --hierarchy edu=edu.csv --k 3 --seed 1 "
             "--rules good-rules.csv -o pub.csv 2>/dev/null",
             dir, ANONKIT_BINARY);
    if (system(cmd) != 0) return -1;
    return 0;
}

/* The anonymize command the cases extend: writes out.csv. */
#define ANON "@BIN@ anonymize in.csv --qi age,edu --hierarchy edu=edu.csv --sensitive disease --k 3 --seed 1 "
#define ANON_STDIN "@BIN@ anonymize - --qi age,edu --hierarchy edu=edu.csv --sensitive disease --k 3 --seed 1 "
#define SEQ_ARGS                                                                                                   \
    "--previous seq-t2.csv --x Name --y Disease --anonymity 2 --class Class "                                     \
    "--hierarchy Job=seq-job.csv --hierarchy Name=seq-name.csv "
#define SEQ "@BIN@ sequential seq-t1.csv " SEQ_ARGS

/* ---- C: all outputs of a run or none ----------------------------------- */

/* A run whose @BAD@ output cannot be written; @OUT@, @REP@, @RULES@ are its
 * other outputs. */
typedef struct failing_case {
    const char *name, *command, *bad;
} failing_case;

/* A run whose report or rules cannot be written fails and leaves every old
 * output byte-identical (the table is not committed before the others); the
 * same run with a writable path in place of the bad one succeeds, so that
 * the bad output is the only reason for the failure. */
static void test_outputs_committed_together(void **state)
{
    (void)state;
    static const failing_case cases[] = {
        {"report to /dev/full", ANON "-o @OUT@ --report @BAD@ --rules @RULES@", "/dev/full"},
        {"rules to /dev/full", ANON "-o @OUT@ --report @REP@ --rules @BAD@", "/dev/full"},
        {"report to a folder", ANON "-o @OUT@ --report @BAD@ --rules @RULES@", "folder"},
        {"rothko-t, report to /dev/full",
         "@BIN@ anonymize in.csv --qi age,edu --hierarchy edu=edu.csv --k 3 --seed 1 --algorithm rothko-t "
         "--memory 4M -o @OUT@ --report @BAD@ --rules @RULES@",
         "/dev/full"},
        {"rothko-s, rules to /dev/full",
         "@BIN@ anonymize in.csv --qi age,edu --hierarchy edu=edu.csv --k 3 --seed 1 --algorithm rothko-s "
         "--memory 4M -o @OUT@ --report @REP@ --rules @BAD@",
         "/dev/full"},
        {"incognito, report to /dev/full",
         "@BIN@ anonymize in.csv --qi edu --hierarchy edu=edu.csv --k 3 --algorithm incognito -o @OUT@ "
         "--report @BAD@",
         "/dev/full"},
        {"hilbert, report to /dev/full",
         "@BIN@ anonymize in.csv --qi age --k 3 --seed 1 --algorithm hilbert -o @OUT@ --report @BAD@", "/dev/full"},
        {"sequential, report to /dev/full", SEQ "-o @OUT@ --report @BAD@", "/dev/full"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tokens bad = {{"@OUT@", "@REP@", "@RULES@", "@BAD@"}, {"out.csv", "r.json", "rules.csv", cases[i].bad}};
        char *before = snapshot(dir), *err = NULL;
        const int status = run_with(cases[i].command, &bad, &err);
        char *after = snapshot(dir);
        if (status != 1) fail_msg("%s: exit %d, not 1: %s", cases[i].name, status, err);
        if (strcmp(before, after)) fail_msg("%s: the folder changed:\n%s\nwas:\n%s", cases[i].name, after, before);
        free(before);
        free(after);
        free(err);
        const tokens good = {{"@OUT@", "@REP@", "@RULES@", "@BAD@"}, {"new.csv", "new.json", "new-rules.csv", "new-bad"}};
        if (run_with(cases[i].command, &good, &err) != 0) fail_msg("%s, writable: %s", cases[i].name, err);
        free(err);
        remove_file("new.csv");
        remove_file("new-bad");
        if (strstr(cases[i].command, "@REP@")) remove_file("new.json");
        if (strstr(cases[i].command, "@RULES@")) remove_file("new-rules.csv");
    }
}

/* ---- D: no output is an input or another output ------------------------ */

/* A refused run and a word its message must hold. */
typedef struct aliasing_case {
    const char *name, *command, *message;
} aliasing_case;

/* Every output naming an input, a hierarchy, an earlier release, the rules
 * recode reads, a job file or another output — as spelled, through ./ or ..,
 * through a symbolic link and through a hard link — is refused before any
 * work with exit 1, a message naming both, and every file unchanged. */
static void test_outputs_distinct_from_inputs(void **state)
{
    (void)state;
    static const aliasing_case cases[] = {
        {"report is the input", ANON "-o out.csv --report in.csv", "--report 'in.csv' and the input 'in.csv'"},
        {"rules are the input", ANON "-o out.csv --rules in.csv", "--rules 'in.csv' and the input"},
        {"output is the input", ANON "-o in.csv", "--output 'in.csv' and the input"},
        {"output is the input through ./", ANON "-o ./in.csv", "the input"},
        {"output is the input through ..", ANON "-o folder/../in.csv", "the input"},
        {"report is the input through a symbolic link", ANON "-o out.csv --report in-symlink.csv", "the input"},
        {"report is the input through a hard link", ANON "-o out.csv --report in-hardlink.csv", "the input"},
        {"output is the input given by a symbolic link",
         "@BIN@ anonymize in-symlink.csv --qi age --k 3 -o in.csv", "the input 'in-symlink.csv'"},
        {"report is a hierarchy", ANON "-o out.csv --report edu.csv", "--report 'edu.csv' and --hierarchy 'edu.csv'"},
        {"rules are a hierarchy through a hard link", ANON "-o out.csv --rules edu-hardlink.csv", "--hierarchy"},
        {"output is the job file", "@BIN@ anonymize in.csv --job job.json --qi age -o job.json", "--job 'job.json'"},
        {"report is the output", ANON "-o out.csv --report out.csv", "--output 'out.csv' and --report 'out.csv'"},
        {"rules are the output", ANON "-o out.csv --rules ./out.csv", "--output 'out.csv' and --rules"},
        {"report and rules are one file", ANON "-o out.csv --report r.json --rules r.json",
         "--report 'r.json' and --rules 'r.json'"},
        {"report and rules are one new file", ANON "-o out.csv --report new.json --rules folder/../new.json",
         "--report 'new.json' and --rules"},
        {"report is the output through a symbolic link", ANON "-o out.csv --report out-symlink.csv", "--output"},
        {"report is the output through a hard link", ANON "-o out.csv --report out-hardlink.csv", "--output"},
        {"rothko-t: report is the input",
         "@BIN@ anonymize in.csv --qi age --k 3 --algorithm rothko-t --memory 4M -o out.csv --report in.csv",
         "the input"},
        {"standard input redirected from the output", ANON_STDIN "-o in.csv < in.csv", "standard input"},
        {"empty output", ANON "-o ''", "--output '' names no file"},
        {"output and report both standard output", ANON "-o - --report -",
         "--output and --report both write to standard output"},
        {"sequential: output is the current release", SEQ "-o seq-t1.csv", "the input 'seq-t1.csv'"},
        {"sequential: report is an earlier release", SEQ "-o out.csv --report ./seq-t2.csv", "--previous 'seq-t2.csv'"},
        {"sequential: report is a hierarchy", SEQ "-o out.csv --report seq-job.csv", "--hierarchy 'seq-job.csv'"},
        {"sequential: report is the output", SEQ "-o out.csv --report out.csv", "--output 'out.csv' and --report"},
        {"sequential: output is the inconsistency file", SEQ "--inconsistent incons.csv -o incons.csv", "--inconsistent"},
        {"recode: output is the rules", "@BIN@ recode --rules good-rules.csv in.csv -o ./good-rules.csv",
         "--rules 'good-rules.csv'"},
        {"recode: output is the input", "@BIN@ recode --rules good-rules.csv in.csv -o in-hardlink.csv",
         "the input 'in.csv'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *before = snapshot(dir), *err = NULL;
        const int status = run_with(cases[i].command, NULL, &err);
        char *after = snapshot(dir);
        if (status != 1) fail_msg("%s: exit %d, not 1: %s", cases[i].name, status, err);
        if (!strstr(err, cases[i].message)) fail_msg("%s: the message lacks \"%s\": %s", cases[i].name, cases[i].message, err);
        if (strcmp(before, after)) fail_msg("%s: the folder changed:\n%s\nwas:\n%s", cases[i].name, after, before);
        free(before);
        free(after);
        free(err);
    }
    /* the commands the cases start from run */
    static const char *const fine[] = {
        ANON "-o new.csv --report new.json --rules new-rules.csv",
        ANON_STDIN "-o new.csv --report new.json --rules new-rules.csv < in.csv",
        SEQ "--inconsistent incons.csv -o new.csv --report new.json",
        "@BIN@ recode --rules good-rules.csv in.csv -o new.csv",
        /* devices are written, not replaced: they may repeat */
        ANON "-o /dev/null --report /dev/null --rules /dev/null",
    };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        char *err = NULL;
        if (run_with(fine[i], NULL, &err) != 0) fail_msg("%s: %s", fine[i], err);
        free(err);
        char path[4300];
        static const char *const made[] = {"new.csv", "new.json", "new-rules.csv"};
        for (size_t m = 0; m < 3; m++) {
            snprintf(path, sizeof path, "%s/%s", dir, made[m]);
            unlink(path);
        }
    }
}

/* ---- E: standard input is spooled under --tmpdir ------------------------ */

/* The commands that spool standard input; @TMP@ is where --tmpdir goes. */
static const char *const stdin_commands[] = {
    ANON_STDIN "@TMP@ -o new.csv < in.csv",
    "@BIN@ check - --qi age,edu --k 3 @TMP@ < pub.csv",
    "@BIN@ metrics in.csv - --qi age,edu --hierarchy edu=edu.csv @TMP@ < pub.csv",
    "@BIN@ sequential - " SEQ_ARGS "@TMP@ -o new.csv < seq-t1.csv",
};

/* Whether folder `name` of the fixture is empty. */
static int empty_folder(const char *name)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct dirent **names = NULL;
    const int n = scandir(path, &names, NULL, NULL);
    assert_true(n >= 2);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return n == 2;
}

/* With --tmpdir D, the copy of standard input goes under D: every command
 * runs with TMPDIR naming a folder that does not exist (where the copy would
 * fail, as the same command without --tmpdir shows) and with TMPDIR naming an
 * empty folder, which stays empty; nothing is left in D either. */
static void test_stdin_spooled_under_tmpdir(void **state)
{
    (void)state;
    char path[4300];
    snprintf(path, sizeof path, "%s/spool", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/empty", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    for (size_t i = 0; i < sizeof stdin_commands / sizeof *stdin_commands; i++) {
        char *err = NULL;
        const tokens nowhere = {{"@TMP@"}, {""}};
        char command[4096];
        snprintf(command, sizeof command, "TMPDIR=@D@/nowhere %s", stdin_commands[i]);
        if (run_with(command, &nowhere, &err) == 0) fail_msg("%s ran without a folder for its copy of stdin", command);
        free(err);
        const tokens spool = {{"@TMP@"}, {"--tmpdir spool"}};
        if (run_with(command, &spool, &err) != 0) fail_msg("%s --tmpdir spool: %s", command, err);
        free(err);
        snprintf(command, sizeof command, "TMPDIR=@D@/empty %s", stdin_commands[i]);
        if (run_with(command, &spool, &err) != 0) fail_msg("%s --tmpdir spool: %s", command, err);
        free(err);
        assert_true(empty_folder("empty"));
        assert_true(empty_folder("spool"));
        snprintf(path, sizeof path, "%s/new.csv", dir);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outputs_committed_together),
        cmocka_unit_test(test_outputs_distinct_from_inputs),
        cmocka_unit_test(test_stdin_spooled_under_tmpdir),
    };
    return cmocka_run_group_tests(tests, fixture_setup, tu_group_teardown);
}
