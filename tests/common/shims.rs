//! LD_PRELOAD shims that watch or change what the real binary asks of the
//! C library: which paths it opens, and whether the user has a home.

use std::path::{Path, PathBuf};

/// Compiles `source` into a shared object in `dir`. `None` when no C
/// compiler is there.
pub fn build(dir: &Path, name: &str, source: &str) -> Option<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).ok()?;
    let shim = dir.join(format!("{name}.so"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-O0", "-U_FORTIFY_SOURCE", "-o"])
        .arg(&shim)
        .arg(&c)
        .arg("-ldl")
        .status()
        .ok()?;
    built.success().then_some(shim)
}

/// Logs every path the process opens, stats, lists, creates or renames,
/// one `OP<TAB>PATH` line each, to the file `$FILELOG`. Relative paths are
/// written resolved (against the working folder, or the folder a
/// descriptor names). The log itself is written with raw system calls, so
/// it does not log itself.
pub const FILE_LOG: &str = r#"
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void note(const char *op, int dirfd, const char *path) {
    const char *log = getenv("FILELOG");
    if (!log || !path) return;
    char dir[PATH_MAX];
    dir[0] = 0;
    if (path[0] != '/') {
        if (dirfd != AT_FDCWD && dirfd >= 0) {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            long n = syscall(SYS_readlinkat, AT_FDCWD, link, dir, sizeof dir - 1);
            dir[n > 0 ? n : 0] = 0;
        } else {
            long n = syscall(SYS_getcwd, dir, sizeof dir);
            if (n <= 0) dir[0] = 0;
        }
    }
    char buf[3 * PATH_MAX + 64];
    int len = snprintf(buf, sizeof buf, "%s\t%s%s%s\n", op, dir, dir[0] ? "/" : "", path);
    if (len <= 0) return;
    if ((size_t)len >= sizeof buf) { len = sizeof buf - 1; buf[len - 1] = '\n'; }
    long fd = syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    syscall(SYS_write, fd, buf, len);
    syscall(SYS_close, fd);
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = dlsym(RTLD_NEXT, #name)

static mode_t mode_of(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *p, int f, ...) {
    va_list ap; va_start(ap, f); mode_t m = mode_of(f, ap); va_end(ap);
    note("open", AT_FDCWD, p); REAL(open); return real(p, f, m);
}
int open64(const char *p, int f, ...) {
    va_list ap; va_start(ap, f); mode_t m = mode_of(f, ap); va_end(ap);
    note("open", AT_FDCWD, p); REAL(open64); return real(p, f, m);
}
int openat(int d, const char *p, int f, ...) {
    va_list ap; va_start(ap, f); mode_t m = mode_of(f, ap); va_end(ap);
    note("open", d, p); REAL(openat); return real(d, p, f, m);
}
int openat64(int d, const char *p, int f, ...) {
    va_list ap; va_start(ap, f); mode_t m = mode_of(f, ap); va_end(ap);
    note("open", d, p); REAL(openat64); return real(d, p, f, m);
}
FILE *fopen(const char *p, const char *m) { note("open", AT_FDCWD, p); REAL(fopen); return real(p, m); }
FILE *fopen64(const char *p, const char *m) { note("open", AT_FDCWD, p); REAL(fopen64); return real(p, m); }
int stat(const char *p, struct stat *s) { note("stat", AT_FDCWD, p); REAL(stat); return real(p, s); }
int stat64(const char *p, struct stat64 *s) { note("stat", AT_FDCWD, p); REAL(stat64); return real(p, s); }
int lstat(const char *p, struct stat *s) { note("stat", AT_FDCWD, p); REAL(lstat); return real(p, s); }
int lstat64(const char *p, struct stat64 *s) { note("stat", AT_FDCWD, p); REAL(lstat64); return real(p, s); }
int fstatat(int d, const char *p, struct stat *s, int f) { note("stat", d, p); REAL(fstatat); return real(d, p, s, f); }
int fstatat64(int d, const char *p, struct stat64 *s, int f) { note("stat", d, p); REAL(fstatat64); return real(d, p, s, f); }
int statx(int d, const char *p, int f, unsigned int m, struct statx *s) {
    if (p && p[0]) note("stat", d, p);
    REAL(statx); return real(d, p, f, m, s);
}
int access(const char *p, int m) { note("stat", AT_FDCWD, p); REAL(access); return real(p, m); }
DIR *opendir(const char *p) { note("opendir", AT_FDCWD, p); REAL(opendir); return real(p); }
int mkdir(const char *p, mode_t m) { note("mkdir", AT_FDCWD, p); REAL(mkdir); return real(p, m); }
int rename(const char *a, const char *b) { note("rename", AT_FDCWD, a); note("rename", AT_FDCWD, b); REAL(rename); return real(a, b); }
char *realpath(const char *p, char *r) { note("stat", AT_FDCWD, p); REAL(realpath); return real(p, r); }
"#;

/// Makes the process look like it runs as a user with no entry in the
/// user database (no home folder), as in some containers and CI jobs.
pub const NO_PASSWD: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stddef.h>
int getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t len, struct passwd **result) {
    (void)uid; (void)pwd; (void)buf; (void)len;
    *result = NULL;
    return 0;
}
struct passwd *getpwuid(uid_t uid) { (void)uid; errno = 0; return NULL; }
"#;

/// One line of a [`FILE_LOG`] log: what was done, and the path.
pub struct Access {
    pub op: String,
    pub path: PathBuf,
}

/// The accesses of a [`FILE_LOG`] log, each path made absolute and its
/// `.` and `..` resolved (lexically: a path that climbs out of a folder
/// shows where it lands).
pub fn accesses(log: &Path) -> Vec<Access> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(op, path)| Access {
            op: op.to_string(),
            path: normalise(Path::new(path)),
        })
        .collect()
}

fn normalise(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Logs every connect() to an IPv4 or IPv6 address and every
/// getaddrinfo() the process makes, one word a line, to `$NETLOG`.
pub const NET_LOG: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static void note(const char *what) {
    const char *path = getenv("NETLOG");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return;
    write(fd, what, strlen(what));
    write(fd, "\n", 1);
    close(fd);
}
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) note("connect");
    int (*real)(int, const struct sockaddr *, socklen_t) = dlsym(RTLD_NEXT, "connect");
    return real(fd, addr, len);
}
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res) {
    note("getaddrinfo");
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **) =
        dlsym(RTLD_NEXT, "getaddrinfo");
    return real(node, service, hints, res);
}
"#;
