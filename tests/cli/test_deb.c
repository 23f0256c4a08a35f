/*
 * The Debian packages that `make deb` builds (debian/, scripts/build-deb.sh) into
 * build/deb/. Building them takes minutes, so the suite does not: CI runs `make deb`
 * before `make test`, and without packages there every test here is skipped, saying so.
 * The packages are unpacked with `dpkg-deb -x` into a scratch root; against it:
 *   - the four packages are there at the header's version, each with its files: the
 *     binary, the pages, the completion, libs2s.so.0 (its SONAME) and its link,
 *     libs2s.a, s2s.h, s2s.pc, the Python module;
 *   - the unpacked s2s runs (--version, a translation equal to ./s2s's);
 *   - README's "Use s2s from C" example, compiled with the unpacked s2s.pc's flags
 *     (linked with libs2s.so.0, then libs2s.a), translates as the unpacked s2s does, and
 *     so does the unpacked Python module;
 *   - the systemd unit for s2s serve is hardened (DynamicUser=yes, ProtectSystem=strict,
 *     ...), takes its arguments from /etc/default/s2s (a conffile), and the maintainer
 *     scripts neither enable nor start it.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define DEB_DIR "build/deb"
#define TF "tests/recorded/tf.s2s"

static const char *const packages[] = {"s2s", "libs2s0", "libs2s-dev", "python3-s2s", NULL};

/* The header's version, "X.Y.Z". */
static char *header_version(void)
{
    char *h = slurp("include/s2s.h", NULL);
    cr_assert(h);
    const char *p = strstr(h, "#define S2S_VERSION_STRING \"");
    cr_assert(p, "include/s2s.h has no S2S_VERSION_STRING");
    p += strlen("#define S2S_VERSION_STRING \"");
    char *v = strndup(p, strcspn(p, "\""));
    free(h);
    return v;
}

/* build/deb/NAME_*.deb, or NULL. */
static char *package_file(const char *name)
{
    char *pat = strf("%s/%s_*.deb", DEB_DIR, name), *path = NULL;
    glob_t g;
    if (glob(pat, 0, NULL, &g) == 0) {
        cr_assert_eq(g.gl_pathc, 1, "%zu files match %s: run make deb again", g.gl_pathc, pat);
        path = strdup(g.gl_pathv[0]);
        globfree(&g);
    }
    free(pat);
    return path;
}

/* Skips the test when make deb has not run (or dpkg-deb is missing). */
static void need_packages(void)
{
    if (!file_exists("/usr/bin/dpkg-deb"))
        cr_skip_test("/usr/bin/dpkg-deb is not installed (apt-get install dpkg): the packages are not tested");
    for (int i = 0; packages[i]; i++) {
        char *f = package_file(packages[i]);
        if (!f)
            cr_skip_test("no %s/%s_*.deb: run `make deb` first (CI does, before make test); "
                         "the Debian packages are not tested",
                         DEB_DIR, packages[i]);
        free(f);
    }
}

/* dpkg-deb -f PACKAGE FIELD, without the newline. */
static char *deb_field(const char *deb, const char *field)
{
    RunResult r = RUN_PROG(NULL, "/usr/bin/dpkg-deb", "-f", deb, field);
    expect_success(&r, "dpkg-deb -f");
    char *v = strndup(r.out, strcspn(r.out, "\n"));
    run_free(&r);
    return v;
}

/* The packages unpacked into a fresh root; libdir is its usr/lib/TRIPLET. */
typedef struct Root {
    char *dir, *libdir, *pc_env[4];
} Root;

static Root unpack(void)
{
    need_packages();
    Root rt = {tmpdir_new(), NULL, {NULL}};
    char *version = header_version();
    for (int i = 0; packages[i]; i++) {
        char *deb = package_file(packages[i]), *name = deb_field(deb, "Package"), *v = deb_field(deb, "Version");
        cr_expect_str_eq(name, packages[i]);
        cr_expect_str_eq(v, version, "%s is at %s, include/s2s.h at %s: run make deb again", deb, v, version);
        RunResult r = RUN_PROG(NULL, "/usr/bin/dpkg-deb", "-x", deb, rt.dir);
        expect_success(&r, "dpkg-deb -x");
        run_free(&r);
        free(deb);
        free(name);
        free(v);
    }
    free(version);
    char *pat = strf("%s/usr/lib/*/libs2s.so.0", rt.dir);
    glob_t g;
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no %s in the packages", pat);
    rt.libdir = strndup(g.gl_pathv[0], strlen(g.gl_pathv[0]) - strlen("/libs2s.so.0"));
    globfree(&g);
    free(pat);
    /* pkg-config reads the unpacked s2s.pc, its paths under the root; /usr/include and
       the multiarch directory are system directories that it would otherwise drop */
    rt.pc_env[0] = strf("PKG_CONFIG_SYSROOT_DIR=%s", rt.dir);
    rt.pc_env[1] = strf("PKG_CONFIG_PATH=%s/pkgconfig", rt.libdir);
    rt.pc_env[2] = strdup("PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1");
    rt.pc_env[3] = strdup("PKG_CONFIG_ALLOW_SYSTEM_LIBS=1");
    return rt;
}

static void root_free(Root *rt)
{
    rm_rf(rt->dir);
    free(rt->dir);
    free(rt->libdir);
    for (int i = 0; i < 4; i++)
        free(rt->pc_env[i]);
}

static void expect_in_root(const Root *rt, const char *path)
{
    char *p = strf("%s/%s", rt->dir, path);
    cr_expect(file_exists(p), "the packages hold no /%s", path);
    free(p);
}

Test(deb, packages_hold_the_files_and_s2s_runs)
{
    Root rt = unpack();
    const char *const files[] = {"usr/bin/s2s",
                                 "usr/share/man/man1/s2s.1.gz",
                                 "usr/share/man/man1/s2s-serve.1.gz",
                                 "usr/share/bash-completion/completions/s2s",
                                 "usr/share/doc/s2s/README.md",
                                 "usr/share/doc/s2s/docs/cli/serve.md",
                                 "usr/share/doc/s2s/copyright",
                                 "usr/share/doc/libs2s0/copyright",
                                 "usr/include/s2s.h",
                                 "usr/lib/python3/dist-packages/s2s/__init__.py",
                                 "etc/default/s2s",
                                 NULL};
    for (int i = 0; files[i]; i++)
        expect_in_root(&rt, files[i]);
    char *version = header_version();
    const char *const libs[] = {"libs2s.so.0", "libs2s.so", "libs2s.a", "pkgconfig/s2s.pc", NULL};
    for (int i = 0; libs[i]; i++) {
        char *p = strf("%s/%s", rt.libdir, libs[i]);
        cr_expect(file_exists(p), "the packages hold no %s", p);
        free(p);
    }
    char *real = strf("%s/libs2s.so.%s", rt.libdir, version);
    cr_expect(file_exists(real), "no %s", real);
    /* the SONAME, as the dynamic linker reads it */
    if (file_exists("/usr/bin/readelf")) {
        RunResult r = RUN_PROG(NULL, "/usr/bin/readelf", "-d", real);
        expect_success(&r, "readelf -d");
        cr_expect(strstr(r.out, "Library soname: [libs2s.so.0]"), "%s", r.out);
        /* Debian's hardening (hardening=+all): symbols bound at load, then read-only */
        cr_expect(strstr(r.out, "BIND_NOW"), "libs2s.so.0 is not linked with -z now:\n%s", r.out);
        run_free(&r);
        char *bin = strf("%s/usr/bin/s2s", rt.dir);
        r = RUN_PROG(NULL, "/usr/bin/readelf", "-d", bin);
        expect_success(&r, "readelf -d s2s");
        cr_expect(strstr(r.out, "BIND_NOW"), "s2s is not linked with -z now:\n%s", r.out);
        run_free(&r);
        free(bin);
    }
    /* the installed module finds the library where the package put it */
    char *init = strf("%s/usr/lib/python3/dist-packages/s2s/__init__.py", rt.dir), *py = slurp(init, NULL),
         *want_dir = strf("_INSTALLED_LIBDIR = \"%s\"", rt.libdir + strlen(rt.dir));
    cr_assert(py);
    cr_expect(strstr(py, want_dir), "%s does not say %s", init, want_dir);

    /* the unpacked binary: its version, and a translation equal to the tree's s2s's
       (not under make asan, whose s2s is compiled at another optimisation level) */
    char *bin = strf("%s/usr/bin/s2s", rt.dir), *ld = strf("LD_LIBRARY_PATH=%s", rt.libdir),
         *want_version = strf("s2s %s\n", version);
    RunResult r = RUN_PROG(NULL, "/usr/bin/env", ld, bin, "--version");
    expect_ok(&r, want_version);
    r = RUN_PROG(NULL, "/usr/bin/env", ld, bin, "translate", TF, "I have a cat.", "Tom likes books.");
    expect_success(&r, "the unpacked s2s translate");
    cr_expect_str_eq(r.err, "");
    cr_expect_eq(count_newlines(r.out), 2, "%s", r.out);
    const char *san = getenv("S2S_SAN");
    if (!san || !*san) {
        RunResult want = RUN_S2S(NULL, "translate", TF, "I have a cat.", "Tom likes books.");
        expect_success(&want, "s2s translate");
        cr_expect_str_eq(r.out, want.out);
        run_free(&want);
    }
    run_free(&r);
    free(init);
    free(py);
    free(want_dir);
    free(bin);
    free(ld);
    free(want_version);
    free(real);
    free(version);
    root_free(&rt);
}

Test(deb, library_and_python_module_from_the_packages)
{
    Root rt = unpack();
    char *dir = tmpdir_new(), *src = strf("%s/translate.c", dir), *exe = strf("%s/translate", dir),
         *exe_static = strf("%s/translate-static", dir), *ld = strf("LD_LIBRARY_PATH=%s", rt.libdir);
    const char *s[] = {"I have a cat.", "Where is the station? It is late.", "Tom likes books."};
    /* what the packaged s2s gives: the library is built with the same flags */
    char *bin = strf("%s/usr/bin/s2s", rt.dir);
    RunResult want = RUN_PROG(NULL, "/usr/bin/env", ld, bin, "translate", TF, s[0], s[1], s[2]);
    expect_success(&want, "the unpacked s2s translate");

    /* README's example, as it stands, against the -dev package */
    char *example = readme_block("## Use s2s from C", "c");
    write_file(src, example);
    PcTree pt = {rt.libdir, rt.pc_env, 4};
    pc_compile(&pt, NULL, src, exe, false);
    pc_compile(&pt, NULL, src, exe_static, true);
    RunResult r = RUN_PROG(NULL, "/usr/bin/env", ld, exe, TF, s[0], s[1], s[2]);
    expect_ok(&r, want.out);
    r = RUN_PROG(NULL, exe_static, TF, s[0], s[1], s[2]);
    expect_ok(&r, want.out);

    /* the Python module of python3-s2s, with libs2s.so.0 of libs2s0 */
    if (file_exists("/usr/bin/python3")) {
        char *pypath = strf("PYTHONPATH=%s/usr/lib/python3/dist-packages", rt.dir),
             *lib = strf("S2S_LIBRARY=%s/libs2s.so.0", rt.libdir);
        const char *prog = "import sys, s2s\n"
                           "with s2s.Translator(sys.argv[1]) as tr:\n"
                           "    for line in tr.translate(sys.argv[2:]):\n"
                           "        print(line)\n";
        r = RUN_PROG(NULL, "/usr/bin/env", pypath, lib, "PYTHONDONTWRITEBYTECODE=1", "/usr/bin/python3", "-c", prog,
                     TF, s[0], s[1], s[2]);
        expect_ok(&r, want.out);
        free(pypath);
        free(lib);
    } else {
        cr_log_warn("/usr/bin/python3 is not installed: the Python module of the packages is not tested");
    }
    run_free(&want);
    free(bin);
    free(example);
    free(src);
    free(exe);
    free(exe_static);
    free(ld);
    rm_rf(dir);
    free(dir);
    root_free(&rt);
}

/* Whether the unit's text has the line `line`. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

Test(deb, serve_unit_hardened_disabled_and_configured_by_one_file)
{
    Root rt = unpack();
    char *unit = strf("%s/lib/systemd/system/s2s.service", rt.dir);
    if (!file_exists(unit)) { /* where debhelper puts units once /lib is merged into /usr */
        free(unit);
        unit = strf("%s/usr/lib/systemd/system/s2s.service", rt.dir);
    }
    char *text = slurp(unit, NULL);
    cr_assert(text, "the s2s package holds no s2s.service (/lib/systemd/system or /usr/lib/systemd/system)");
    const char *const lines[] = {"DynamicUser=yes",
                                 "NoNewPrivileges=yes",
                                 "ProtectSystem=strict",
                                 "ProtectHome=yes",
                                 "PrivateTmp=yes",
                                 "PrivateDevices=yes",
                                 "ProtectKernelTunables=yes",
                                 "ProtectKernelModules=yes",
                                 "ProtectControlGroups=yes",
                                 "RestrictSUIDSGID=yes",
                                 "CapabilityBoundingSet=",
                                 "SystemCallFilter=@system-service",
                                 "EnvironmentFile=/etc/default/s2s",
                                 "ExecStart=/usr/bin/s2s serve $S2S_SERVE_ARGS",
                                 "WantedBy=multi-user.target",
                                 NULL};
    for (int i = 0; lines[i]; i++)
        cr_expect(has_line(text, lines[i]), "s2s.service has no line '%s'", lines[i]);

    /* the configuration file: the variable ExecStart reads, a conffile */
    char *conf = strf("%s/etc/default/s2s", rt.dir), *conf_text = slurp(conf, NULL);
    cr_assert(conf_text, "no /etc/default/s2s");
    cr_expect(has_line(conf_text, "S2S_SERVE_ARGS=\"\""), "/etc/default/s2s: %s", conf_text);
    char *deb = package_file("s2s"), *ctl = strf("%s/control", rt.dir);
    RunResult r = RUN_PROG(NULL, "/usr/bin/dpkg-deb", "-e", deb, ctl);
    expect_success(&r, "dpkg-deb -e");
    run_free(&r);
    char *conffiles = strf("%s/conffiles", ctl), *cf = slurp(conffiles, NULL);
    cr_expect(cf && has_line(cf, "/etc/default/s2s"), "/etc/default/s2s is not a conffile: %s", cf ? cf : "");

    /* installing neither enables nor starts it: nothing starts it, and the only `enable`
       is debhelper's for a unit the administrator had enabled (was-enabled) in an
       earlier install (debian-installed), not the one that enables a new install */
    char *postinst = strf("%s/postinst", ctl), *pi = slurp(postinst, NULL);
    cr_assert(pi, "the s2s package has no postinst");
    cr_expect(!strstr(pi, "deb-systemd-invoke start") && !strstr(pi, "systemctl start") &&
                  !strstr(pi, "$_dh_action"),
              "postinst starts the unit:\n%s", pi);
    const char *en = strstr(pi, "deb-systemd-helper enable"), *was = strstr(pi, "was-enabled"),
               *installed = strstr(pi, "deb-systemd-helper debian-installed");
    cr_expect(!en || (installed && was && installed < was && was < en &&
                      !strstr(en + 1, "deb-systemd-helper enable")),
              "postinst enables the unit:\n%s", pi);

    /* systemd reads the unit without a complaint, where it is installed: a copy under
       another name (the host may know s2s.service), its ExecStart the unpacked binary */
    if (file_exists("/usr/bin/systemd-analyze")) {
        const char *exec = "ExecStart=/usr/bin/s2s ", *at = strstr(text, exec);
        cr_assert(at);
        char *dir = tmpdir_new(), *copy = strf("%s/s2s-check.service", dir),
             *copy_text = strf("%.*sExecStart=%s/usr/bin/s2s %s", (int)(at - text), text, rt.dir, at + strlen(exec));
        write_file(copy, copy_text);
        r = RUN_PROG(NULL, "/usr/bin/systemd-analyze", "verify", "--man=no", copy);
        cr_expect_eq(r.status, 0, "systemd-analyze verify: status %d\n%s%s", r.status, r.out, r.err);
        cr_expect_str_eq(r.err, "", "systemd-analyze verify: %s", r.err);
        run_free(&r);
        rm_rf(dir);
        free(dir);
        free(copy);
        free(copy_text);
    }
    free(unit);
    free(text);
    free(conf);
    free(conf_text);
    free(deb);
    free(ctl);
    free(conffiles);
    free(cf);
    free(postinst);
    free(pi);
    root_free(&rt);
}
