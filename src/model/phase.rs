//! The exit-phase facts of a report: which threads exit, start or wait,
//! at which stage, as `exit_phase::classify` finds them.

use serde::{Deserialize, Serialize};

/// The exit-phase facts of a dump: computed from the stacks by
/// `exit_phase::classify`.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema, Deserialize)]
pub struct ExitPhase {
    /// Some thread is running process exit (see the thread's `exiting`).
    pub process_exiting: bool,
    /// Some thread is starting the process or loading a module (static
    /// constructors, DllMain for attach): such a dump is not an exit.
    pub process_starting: bool,
    /// The crashing thread of a crash; for a dump without a crash, the
    /// exiting thread that is blocked (or, failing that, an exiting thread).
    pub blamed_thread: Option<u32>,
    /// Set when no thread shows an exit frame but the stacks cannot rule
    /// exit out either (the C runtime's frames are unnamed, say): why.
    /// `None` when the process is exiting, or when a thread shows start-up
    /// or `main` running normally.
    pub exit_not_proven: Option<String>,
    /// Threads that wait for each other in a cycle (each one's wait's
    /// holder is the next, the last's the first): a deadlock.
    pub deadlock: Option<Vec<u32>>,
}

/// Why a thread is considered to be starting up: the innermost start-up
/// frame.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct StartupMarker {
    pub frame_index: usize,
    pub stage: StartupStage,
    /// The frame's function.
    pub function: String,
}

/// The kind of start-up work a frame shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum StartupStage {
    #[serde(rename = "process start-up")]
    ProcessStartup,
    #[serde(rename = "static constructor")]
    StaticConstructor,
    #[serde(rename = "module load")]
    ModuleLoad,
    #[serde(rename = "DllMain during process attach")]
    DllAttach,
}

impl StartupStage {
    /// The words every output uses (the JSON value too).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            StartupStage::ProcessStartup => "process start-up",
            StartupStage::StaticConstructor => "static constructor",
            StartupStage::ModuleLoad => "module load",
            StartupStage::DllAttach => "DllMain during process attach",
        }
    }
}

impl std::fmt::Display for StartupStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why a thread is considered to be ending (its own exit, not the
/// process's): the innermost frame of its teardown.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadEnd {
    pub frame_index: usize,
    /// The frame's function (`__call_tls_dtors`, `pthread_exit`, ...).
    pub function: String,
    /// The thread's start function below it (`start_thread`, ...), when
    /// the stack shows it.
    pub start: Option<String>,
}

/// Why a thread is considered to be exiting: the innermost exit-time frame.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct ExitMarker {
    pub frame_index: usize,
    /// What the frame shows ("CRT exit", "DllMain during process detach", ...).
    pub stage: ExitStage,
    /// The frame's function, or what stood in for it.
    pub function: String,
}

/// The stage of process exit a frame shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ExitStage {
    #[serde(rename = "process exit")]
    ProcessExit,
    #[serde(rename = "loader shutdown")]
    LoaderShutdown,
    #[serde(rename = "CRT exit")]
    CrtExit,
    #[serde(rename = "atexit table")]
    AtexitTable,
    #[serde(rename = "static destructor")]
    StaticDestructor,
    #[serde(rename = "C exit handlers")]
    CExitHandlers,
    #[serde(rename = "dynamic loader shutdown")]
    DynamicLoaderShutdown,
    #[serde(rename = "Python finalization")]
    PythonFinalization,
    #[serde(rename = "Node.js environment cleanup")]
    NodeCleanup,
    #[serde(rename = ".NET runtime shutdown")]
    DotnetShutdown,
    /// The JVM's exit: `System.exit`, the shutdown hooks, `before_exit`,
    /// `DestroyJavaVM`.
    #[serde(rename = "JVM shutdown")]
    JvmShutdown,
    /// A module's teardown hook (`__hipUnregisterFatBinary`, ...), run at
    /// exit or when the module is unloaded.
    #[serde(rename = "module teardown")]
    ModuleTeardown,
    #[serde(rename = "DllMain during process detach")]
    DllDetach,
    /// Inferred: the CRT start-up frame is on the stack and main is not.
    #[serde(rename = "main has returned: the CRT is running exit")]
    MainReturned,
}

impl ExitStage {
    /// The words every output uses (the JSON value too).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ExitStage::ProcessExit => "process exit",
            ExitStage::LoaderShutdown => "loader shutdown",
            ExitStage::CrtExit => "CRT exit",
            ExitStage::AtexitTable => "atexit table",
            ExitStage::StaticDestructor => "static destructor",
            ExitStage::CExitHandlers => "C exit handlers",
            ExitStage::DynamicLoaderShutdown => "dynamic loader shutdown",
            ExitStage::PythonFinalization => "Python finalization",
            ExitStage::NodeCleanup => "Node.js environment cleanup",
            ExitStage::DotnetShutdown => ".NET runtime shutdown",
            ExitStage::JvmShutdown => "JVM shutdown",
            ExitStage::ModuleTeardown => "module teardown",
            ExitStage::DllDetach => "DllMain during process detach",
            ExitStage::MainReturned => "main has returned: the CRT is running exit",
        }
    }
}

impl std::fmt::Display for ExitStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// The wait a thread is blocked in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Blocked {
    pub frame_index: usize,
    pub function: String,
    /// False when inferred from an unsymbolized system-call frame.
    pub certain: bool,
    /// What kind of wait the calls show (`None` when they do not say: a
    /// bare futex or handle wait).
    pub kind: Option<BlockKind>,
}

/// What a blocking call waits for, as the call itself shows it (the
/// exit-phase table's wait groups): the user's first question about a
/// blocked thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Sleep,
    Io,
    Child,
    Signal,
    Lock,
    Condition,
    Join,
    Semaphore,
    Gpu,
}

impl BlockKind {
    /// The words the text report uses.
    pub fn describe(self) -> &'static str {
        match self {
            BlockKind::Sleep => "sleep",
            BlockKind::Io => "I/O wait",
            BlockKind::Child => "wait for a child process",
            BlockKind::Signal => "wait for a signal",
            BlockKind::Lock => "lock wait",
            BlockKind::Condition => "condition variable wait",
            BlockKind::Join => "thread join",
            BlockKind::Semaphore => "semaphore wait",
            BlockKind::Gpu => "GPU fence wait",
        }
    }
}

impl Blocked {
    /// `__GI___poll (I/O wait)`: the function, with the kind of wait when
    /// the calls show it.
    pub fn describe(&self) -> String {
        match self.kind {
            Some(kind) => format!("{} ({})", self.function, kind.describe()),
            None => self.function.clone(),
        }
    }
}

/// What a blocked thread waits for, and who holds it, where the dump can
/// tell: Linux futex waits (a mutex, a thread to join, a condition
/// variable), Windows critical sections (the loader lock among them), SRW
/// locks, condition variables and handle waits.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Wait {
    pub kind: WaitKind,
    /// The wait object's address (the mutex, the joined thread's tid word,
    /// the critical section).
    #[serde(
        serialize_with = "super::hex::hex_option",
        deserialize_with = "super::hex::de_hex_option"
    )]
    #[schemars(with = "Option<super::hex::Hex>")]
    pub address: Option<u64>,
    /// The thread that holds the lock, or the thread being joined, when
    /// the dump tells (its id).
    pub holder: Option<u32>,
    /// The owner the lock records when that thread is not in the dump: it
    /// ended while holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_owner: Option<u32>,
    /// How the object was found when not from the wait's own registers
    /// (a validated critical section on the wait's stack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The module whose image holds the object, with the offset
    /// (`applog.dll+0x5090`: a global of that module), when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_module: Option<String>,
    /// What could not be told, and why (never a guess).
    pub note: Option<String>,
}

impl Wait {
    /// A wait whose holder is known.
    pub fn held(kind: WaitKind, address: u64, holder: u32) -> Wait {
        Wait {
            kind,
            address: Some(address),
            holder: Some(holder),
            gone_owner: None,
            found: None,
            in_module: None,
            note: None,
        }
    }

    /// A wait whose holder is not known, and why.
    pub fn unknown(kind: WaitKind, address: Option<u64>, why: &str) -> Wait {
        Wait {
            kind,
            address,
            holder: None,
            gone_owner: None,
            found: None,
            in_module: None,
            note: Some(why.to_string()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    Mutex,
    Join,
    Condition,
    Semaphore,
    CriticalSection,
    LoaderLock,
    SrwLock,
    Handle,
}

impl WaitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WaitKind::Mutex => "mutex",
            WaitKind::Join => "join",
            WaitKind::Condition => "condition variable",
            WaitKind::Semaphore => "semaphore",
            WaitKind::CriticalSection => "critical section",
            WaitKind::LoaderLock => "the loader lock",
            WaitKind::SrwLock => "SRW lock",
            WaitKind::Handle => "kernel object handle",
        }
    }

    /// The kind with its article: `a mutex`, `the loader lock`.
    pub fn article(self) -> String {
        match self {
            WaitKind::LoaderLock => self.as_str().to_string(),
            _ => format!("a {}", self.as_str()),
        }
    }
}

/// A cycle of waiting threads as reports say it: `thread 1 -> thread 2 ->
/// thread 1`.
pub fn describe_cycle(cycle: &[u32]) -> String {
    cycle
        .iter()
        .chain(cycle.first())
        .map(|id| format!("thread {id}"))
        .collect::<Vec<_>>()
        .join(" -> ")
}
