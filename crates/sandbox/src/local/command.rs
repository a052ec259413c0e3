//! The command line that confines the sandbox's supervisor: bubblewrap's mounts and namespaces, then
//! `prlimit`'s resource limits, then (when the caller is root) `setpriv` dropping to an
//! unprivileged user.

use std::path::{Path, PathBuf};

/// Resource limits of every process a [`LocalSandbox`](crate::LocalSandbox) starts, set with
/// `prlimit` inside the sandbox (`None`: no limit).
///
/// The process limit counts every process of the sandbox's user, so it bounds fork bombs
/// when the sandbox runs as its own user (always, when the caller is root).
///
/// Start from `default()` (or [`none`](Self::none)) and chain the setters (the struct is
/// `#[non_exhaustive]`).
///
/// ```
/// use actuator_sandbox::ResourceLimits;
/// let limits = ResourceLimits::default().max_memory(Some(1 << 30)).max_processes(None);
/// assert_eq!(limits.max_memory, Some(1 << 30));
/// assert_eq!(limits.max_processes, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceLimits {
    /// `RLIMIT_NPROC`: processes of the user (default 512).
    pub max_processes: Option<u64>,
    /// `RLIMIT_FSIZE`: the largest file a process may write, in bytes (default 1 GiB).
    pub max_file_size: Option<u64>,
    /// `RLIMIT_AS`: address space per process, in bytes (default 4 GiB).
    pub max_memory: Option<u64>,
    /// `RLIMIT_NOFILE`: open files per process (default 1024).
    pub max_open_files: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            max_processes: Some(512),
            max_file_size: Some(1 << 30),
            max_memory: Some(4 << 30),
            max_open_files: Some(1024),
        }
    }
}

impl ResourceLimits {
    /// No limits at all.
    pub fn none() -> Self {
        ResourceLimits {
            max_processes: None,
            max_file_size: None,
            max_memory: None,
            max_open_files: None,
        }
    }

    /// Sets `RLIMIT_NPROC` (`None`: unlimited).
    #[must_use]
    pub fn max_processes(mut self, limit: Option<u64>) -> Self {
        self.max_processes = limit;
        self
    }

    /// Sets `RLIMIT_FSIZE`, in bytes (`None`: unlimited).
    #[must_use]
    pub fn max_file_size(mut self, limit: Option<u64>) -> Self {
        self.max_file_size = limit;
        self
    }

    /// Sets `RLIMIT_AS`, in bytes (`None`: unlimited).
    #[must_use]
    pub fn max_memory(mut self, limit: Option<u64>) -> Self {
        self.max_memory = limit;
        self
    }

    /// Sets `RLIMIT_NOFILE` (`None`: unlimited).
    #[must_use]
    pub fn max_open_files(mut self, limit: Option<u64>) -> Self {
        self.max_open_files = limit;
        self
    }

    fn prlimit_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut push = |flag: &str, v: Option<u64>| {
            if let Some(v) = v {
                args.push(format!("--{flag}={v}"));
            }
        };
        push("nproc", self.max_processes);
        push("fsize", self.max_file_size);
        push("as", self.max_memory);
        push("nofile", self.max_open_files);
        if args.is_empty() {
            return args;
        }
        let mut out = vec!["prlimit".to_owned()];
        out.extend(args);
        out.push("--".to_owned());
        out
    }
}

/// Who the confined processes run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// The caller's own user, in a user namespace (an unprivileged caller).
    Caller,
    /// An unprivileged host user, switched to with `setpriv` (a root caller).
    Drop { uid: u32, gid: u32 },
}

/// Everything needed to build a confined command line.
#[derive(Debug, Clone)]
pub(crate) struct Confined {
    pub bwrap: PathBuf,
    pub workdir: PathBuf,
    pub tmp: PathBuf,
    pub network: bool,
    pub identity: Identity,
    pub limits: ResourceLimits,
    pub ro_binds: Vec<PathBuf>,
    /// The supervisor's control directory (the host's; bound read-only at the same path
    /// inside).
    pub ctl: PathBuf,
    /// Where the supervisor's standard error goes (on the host only).
    pub log: PathBuf,
    /// Whether the sandbox gets a session of its own (`--new-session`): when the caller has
    /// a controlling terminal, so the sandbox can never reach it (`TIOCSTI`). Without one
    /// there is no terminal to reach, and staying in the caller's session keeps the
    /// sandbox in the caller's scheduler autogroup: a session of its own is an autogroup of
    /// its own, which a loaded machine serves several milliseconds later per command.
    pub new_session: bool,
}

/// Whether this process has a controlling terminal (`/dev/tty` opens).
pub(crate) fn has_controlling_terminal() -> bool {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        "/dev/tty",
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .is_ok()
}

/// The system directories bound read-only (the rest of the host is not visible).
const SYSTEM_DIRS: &[&str] = &["/usr", "/etc", "/opt"];
/// Top-level directories that are symlinks into `/usr` on merged-/usr systems.
const LINK_DIRS: &[&str] = &["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"];

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Confined {
    /// The full argv: bwrap and its options, prlimit, setpriv, then `argv`.
    pub fn argv(&self, cwd: &Path, argv: &[String]) -> Vec<String> {
        let mut a: Vec<String> = vec![s(&self.bwrap)];
        let mut push = |items: &[&str]| a.extend(items.iter().map(|x| (*x).to_owned()));
        for dir in SYSTEM_DIRS {
            push(&["--ro-bind-try", dir, dir]);
        }
        for dir in LINK_DIRS {
            let path = Path::new(dir);
            match std::fs::read_link(path) {
                Ok(target) => a.extend(["--symlink".to_owned(), s(&target), (*dir).to_owned()]),
                Err(_) => a.extend([
                    "--ro-bind-try".to_owned(),
                    (*dir).to_owned(),
                    (*dir).to_owned(),
                ]),
            }
        }
        for bind in &self.ro_binds {
            a.extend(["--ro-bind".to_owned(), s(bind), s(bind)]);
        }
        let mut push = |items: &[&str]| a.extend(items.iter().map(|x| (*x).to_owned()));
        push(&["--proc", "/proc", "--dev", "/dev"]);
        a.extend(["--bind".to_owned(), s(&self.tmp), "/tmp".to_owned()]);
        // The mount point's parents, made traversable for the sandbox user (bwrap would make
        // them with its own umask, often 077).
        let mut parents: Vec<&Path> = self.workdir.ancestors().skip(1).collect();
        parents.reverse();
        for parent in parents {
            if parent != Path::new("/") && parent != Path::new("/tmp") {
                a.extend([
                    "--perms".to_owned(),
                    "0755".to_owned(),
                    "--dir".to_owned(),
                    s(parent),
                ]);
            }
        }
        a.extend(["--bind".to_owned(), s(&self.workdir), s(&self.workdir)]);
        // Read-only: nothing a command writes may become a name the host opens.
        a.extend(["--ro-bind".to_owned(), s(&self.ctl), s(&self.ctl)]);
        // The sandbox's own root (a tmpfs holding the mount points) is read-only too.
        a.extend(["--remount-ro".to_owned(), "/".to_owned()]);
        a.extend(["--chdir".to_owned(), s(cwd)]);
        let mut push = |items: &[&str]| a.extend(items.iter().map(|x| (*x).to_owned()));
        push(&[
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "sandbox",
            "--die-with-parent",
        ]);
        if self.new_session {
            push(&["--new-session"]);
        }
        if !self.network {
            push(&["--unshare-net"]);
        }
        match self.identity {
            Identity::Caller => push(&["--unshare-user"]),
            // setpriv needs these two to switch user; it drops every capability after.
            Identity::Drop { .. } => {
                push(&["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]);
            }
        }
        a.push("--".to_owned());
        a.extend(self.limits.prlimit_args());
        if let Identity::Drop { uid, gid } = self.identity {
            a.extend([
                "setpriv".to_owned(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_owned(),
                "--inh-caps=-all".to_owned(),
                "--bounding-set=-all".to_owned(),
                "--".to_owned(),
            ]);
        }
        a.extend(argv.iter().cloned());
        a
    }
}

/// `PATH` inside the sandbox.
pub(crate) const SANDBOX_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Finds `bwrap` on the host's `PATH`.
pub(crate) fn find_bwrap() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
}

/// Quotes `argv` for `sh -c` (single quotes; embedded single quotes closed and escaped).
pub(crate) fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| shell_quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quotes one word for a shell (single quotes; embedded single quotes closed and escaped).
pub(crate) fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}
