//! A real single-node Slurm cluster for one test: munged, slurmctld and slurmd started as
//! this process's children in a temporary directory, with a configuration written for this
//! host (its cores, loopback addresses, free ports, a fresh munge key), and stopped by PID
//! when it is dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `path` when it exists; otherwise `None` with the reason printed, or a panic under CI, where
/// a missing component is a failure.
pub fn needed(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let reason = format!("{what} is missing at {}", path.display());
    assert!(
        std::env::var_os("CI").is_none(),
        "{reason} (CI is set, so this is a failure)"
    );
    eprintln!("skipped: {reason}");
    None
}

/// A Slurm cluster of one node, `node0`, on loopback.
pub struct SlurmCluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

/// States a job does not leave.
const ENDED: [&str; 7] = [
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
];

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl SlurmCluster {
    /// Starts the cluster and waits (at most 60 s) until its node is idle; `None` (skipped)
    /// when Slurm is not installed, outside CI.
    pub fn start() -> Option<SlurmCluster> {
        for daemon in ["munged", "slurmctld", "slurmd"] {
            needed(PathBuf::from("/usr/sbin").join(daemon), daemon)?;
        }
        needed(PathBuf::from("/usr/bin/sbatch"), "sbatch")?;
        let dir = tempfile::Builder::new()
            .prefix("actuator-slurm-")
            .tempdir()
            .unwrap();
        let d = dir.path().to_owned();
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let mut key = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::fs::File::open("/dev/urandom").unwrap(), 1024),
            &mut key,
        )
        .unwrap();
        write_private(&d.join("munge.key"), &key);
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
            .to_owned();
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let conf = d.join("slurm.conf");
        let p = |name: &str| d.join(name).display().to_string();
        std::fs::write(
            &conf,
            format!(
                "ClusterName=actuator-test\n\
                 SlurmctldHost={hostname}(127.0.0.1)\n\
                 SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
                 SlurmUser=root\nSlurmdUser=root\n\
                 AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\n\
                 StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
                 SlurmctldPidFile={ctld_pid}\nSlurmdPidFile={slurmd_pid}\n\
                 SlurmctldLogFile={ctld_log}\nSlurmdLogFile={slurmd_log}\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n\
                 SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 SchedulerType=sched/backfill\nMpiDefault=none\nReturnToService=2\n\
                 MinJobAge=3600\n\
                 NodeName=node0 NodeHostname={hostname} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1 State=UNKNOWN\n\
                 PartitionName=debug Nodes=node0 Default=YES MaxTime=INFINITE State=UP\n",
                ctld = free_port(),
                slurmd = free_port(),
                sock = p("munge.sock"),
                state = p("state"),
                spool = p("spool"),
                ctld_pid = p("slurmctld.pid"),
                slurmd_pid = p("slurmd.pid"),
                ctld_log = p("log/slurmctld.log"),
                slurmd_log = p("log/slurmd.log"),
            ),
        )
        .unwrap();
        let mut cluster = SlurmCluster {
            dir,
            conf,
            daemons: Vec::new(),
        };
        cluster.spawn(
            "munged",
            Command::new("munged").args([
                "--foreground",
                "--force",
                &format!("--socket={}", p("munge.sock")),
                &format!("--key-file={}", p("munge.key")),
                &format!("--log-file={}", p("log/munged.log")),
                &format!("--pid-file={}", p("munged.pid")),
                &format!("--seed-file={}", p("munged.seed")),
            ]),
        );
        cluster.wait_until("munged's socket", |_| d.join("munge.sock").exists());
        // -c: no state from an earlier run; -D: in the foreground, this process's child.
        cluster.spawn("slurmctld", Command::new("slurmctld").args(["-D", "-c"]));
        cluster.spawn("slurmd", Command::new("slurmd").args(["-D", "-N", "node0"]));
        cluster.wait_until("node0 idle", |cluster| {
            let out = cluster.command("sinfo").args(["-h", "-o", "%T"]).output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        Some(cluster)
    }

    /// The cluster's directory (a job's working directory can go under it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A Slurm client command for this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", &self.conf);
        command
    }

    /// Runs `command` against this cluster (its `SLURM_CONF` set) and returns its standard
    /// output; panics with its output and the daemons' logs when it fails.
    pub fn run(&self, command: &mut Command) -> String {
        let out = command.env("SLURM_CONF", &self.conf).output().unwrap();
        assert!(
            out.status.success(),
            "{command:?} failed: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The job's state (`COMPLETED`, `FAILED`, `PENDING`…), as `scontrol` shows it.
    pub fn state(&self, job: &str) -> String {
        let out = self.run(self.command("scontrol").args(["show", "job", "-o", job]));
        out.split_whitespace()
            .find_map(|field| field.strip_prefix("JobState="))
            .unwrap_or_else(|| panic!("no JobState for {job}: {out}"))
            .to_owned()
    }

    /// Waits (at most `timeout`) until the job has ended, and returns its final state.
    pub fn wait_for(&self, job: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let state = self.state(job);
            if ENDED.contains(&state.as_str()) {
                return state;
            }
            assert!(
                Instant::now() < deadline,
                "job {job} still {state} after {timeout:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn spawn(&mut self, name: &'static str, command: &mut Command) {
        let child = command
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir().join(format!("log/{name}.stderr"))).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        self.daemons.push((name, child));
    }

    fn wait_until(&mut self, what: &str, ready: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready(self) {
            let exited = self.daemons.iter_mut().find_map(|(name, child)| {
                let status = child.try_wait().ok().flatten()?;
                Some(format!("{name} exited ({status})"))
            });
            if let Some(exited) = exited {
                panic!("{exited} before {what}\n{}", self.logs());
            }
            assert!(
                Instant::now() < deadline,
                "no {what} after 60 s\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The daemons' logs, for a failure's message.
    fn logs(&self) -> String {
        let mut text = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir().join("log")) else {
            return text;
        };
        for entry in entries.flatten() {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(15).collect();
            text.push_str(&format!("--- {}\n", entry.path().display()));
            for line in tail.into_iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        // Jobs still running end first (a failed test can leave some), then the daemons.
        let _ = self.command("scancel").args(["--user", "root"]).output();
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn write_private(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
}
