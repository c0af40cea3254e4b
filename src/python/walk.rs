//! Walking CPython's runtime state in a process's memory: interpreters,
//! their thread states, each thread's frames, and the code objects,
//! strings and line tables they point to. The layouts are CPython's own,
//! per version (offsets.toml, from each version's headers).
//!
//! Memory is untrusted: every pointer is read through `Memory` (a missing
//! byte ends that part of the walk), counts and chains are bounded, a
//! cycle ends a chain, and an object whose type is not the one expected
//! ends the thread's stack with a mark instead of a wrong frame.

use std::collections::HashSet;

use super::layout::{Globals, Layout};
use super::lines;

/// A process's memory, as a dump or a live process gives it.
pub(crate) trait Memory {
    fn read(&self, address: u64, len: usize) -> Option<Vec<u8>>;
}

/// Where glibc's `struct pthread` (a `pthread_t` points to it) keeps the
/// thread's id on x86-64 (glibc 2.17 to 2.40): how 3.10, which records only
/// the pthread_t, is matched to the dump's threads. Read during the walk,
/// so a capture keeps it; a value that is not one of the dump's threads
/// matches nothing.
const PTHREAD_TID: u64 = 0x2d0;
const MAX_INTERPRETERS: usize = 16;
const MAX_THREADS: usize = 1024;
const MAX_FRAMES: usize = 2048;
const MAX_STRING: u64 = 4096;
const MAX_LINETABLE: u64 = 1 << 20;
/// FRAME_OWNED_BY_CSTACK (3.12+): the shim frame below each C entry into
/// the evaluator, not Python code.
const OWNED_BY_CSTACK: u8 = 3;

/// One Python frame: the function, its file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyFrame {
    pub function: String,
    pub file: String,
    pub line: Option<u32>,
    /// The first frame of an evaluator call (its bottom): the native
    /// `_PyEval_EvalFrameDefault` that runs it runs the frames above it.
    pub entry: bool,
    /// The frame's first local, when it is an argument (`self` of a method).
    pub first_local: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PyThread {
    /// The OS thread id (3.11+; 3.10: from glibc's `struct pthread`), to
    /// match the dump's threads.
    pub native_id: Option<u32>,
    /// `threading.get_ident()`: the pthread_t.
    pub ident: u64,
    /// Most recent call first.
    pub frames: Vec<PyFrame>,
    /// Why the stack ends early (memory missing or inconsistent).
    pub cut: Option<String>,
    /// Its `threading.Thread` name, when its stack shows the Thread.
    pub name: Option<String>,
    /// Its `threading.Thread` object (`self` of `Thread._bootstrap`).
    pub thread_object: Option<u64>,
    /// `Thread.daemon`: the interpreter does not wait for a daemon thread
    /// at exit.
    pub daemon: Option<bool>,
    /// What `Thread.join` and `threading._shutdown` wait on to join it
    /// (3.10 to 3.12): the native lock (a semaphore on Linux) of its
    /// `_tstate_lock`, which the thread holds until it ends.
    pub join_lock: Option<u64>,
    /// The GIL is taken and this thread took it last.
    pub holds_gil: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PyState {
    pub finalizing: bool,
    pub threads: Vec<PyThread>,
}

pub(crate) struct Walker<'a> {
    pub memory: &'a dyn Memory,
    pub layout: &'a Layout,
    pub globals: Globals,
}

impl Walker<'_> {
    pub(super) fn u64(&self, address: u64) -> Option<u64> {
        let b = self.memory.read(address, 8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    pub(super) fn u8(&self, address: u64) -> Option<u8> {
        self.memory.read(address, 1).map(|b| b[0])
    }

    pub(super) fn u32(&self, address: u64) -> Option<u32> {
        let b = self.memory.read(address, 4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    }

    fn field(&self, name: &str) -> Option<u64> {
        self.layout.get(name)
    }

    pub(super) fn state(&self, runtime: u64) -> Result<PyState, String> {
        let f = |name: &str| {
            self.field(name)
                .ok_or_else(|| format!("no offset {name} for this version"))
        };
        let finalizing = self
            .u64(runtime.wrapping_add(f("runtime_finalizing")?))
            .ok_or("the runtime state is not in the dump")?
            != 0;
        let mut state = PyState {
            finalizing,
            threads: Vec::new(),
        };
        let mut interp = self
            .u64(runtime.wrapping_add(f("runtime_interpreters_head")?))
            .ok_or("the runtime state is not in the dump")?;
        let mut seen = HashSet::new();
        for _ in 0..MAX_INTERPRETERS {
            if interp == 0 || !seen.insert(interp) {
                break;
            }
            let holder = self.gil_holder(runtime, interp);
            let mut tstate = self
                .u64(interp.wrapping_add(f("interp_threads_head")?))
                .unwrap_or(0);
            for _ in 0..MAX_THREADS {
                if tstate == 0 || !seen.insert(tstate) {
                    break;
                }
                let mut thread = self.thread(tstate);
                thread.holds_gil = holder == Some(tstate);
                state.threads.push(thread);
                tstate = self
                    .u64(tstate.wrapping_add(f("tstate_next")?))
                    .unwrap_or(0);
            }
            interp = self
                .u64(interp.wrapping_add(f("interp_next")?))
                .unwrap_or(0);
        }
        Ok(state)
    }

    /// The thread state holding the GIL: the runtime's GIL (3.10, 3.11) or
    /// the interpreter's (3.12+), when it is taken.
    fn gil_holder(&self, runtime: u64, interp: u64) -> Option<u64> {
        let layout = self.layout;
        let (locked, holder) = match layout.get("interp_gil") {
            Some(o) => {
                let gil = self.u64(interp.wrapping_add(o)).filter(|g| *g != 0)?;
                (
                    gil.wrapping_add(layout.get("gil_locked")?),
                    gil.wrapping_add(layout.get("gil_holder")?),
                )
            }
            None => (
                runtime.wrapping_add(layout.get("runtime_gil_locked")?),
                runtime.wrapping_add(layout.get("runtime_gil_holder")?),
            ),
        };
        (self.u32(locked)? != 0).then(|| self.u64(holder)).flatten()
    }

    fn thread(&self, tstate: u64) -> PyThread {
        let layout = self.layout;
        let mut thread = PyThread {
            ident: layout
                .get("tstate_thread_id")
                .and_then(|o| self.u64(tstate.wrapping_add(o)))
                .unwrap_or(0),
            native_id: layout
                .get("tstate_native_thread_id")
                .and_then(|o| self.u64(tstate.wrapping_add(o)))
                .and_then(|id| u32::try_from(id).ok()),
            ..PyThread::default()
        };
        if layout.get("tstate_native_thread_id").is_none() && thread.ident != 0 {
            thread.native_id = self.u32(thread.ident.wrapping_add(PTHREAD_TID));
        }
        let top = if let Some(o) = layout.get("tstate_current_frame") {
            self.u64(tstate.wrapping_add(o))
        } else if let (Some(c), Some(o)) = (
            layout.get("tstate_cframe"),
            layout.get("cframe_current_frame"),
        ) {
            self.u64(tstate.wrapping_add(c))
                .and_then(|cframe| match cframe {
                    0 => Some(0),
                    _ => self.u64(cframe.wrapping_add(o)),
                })
        } else {
            layout
                .get("tstate_frame")
                .and_then(|o| self.u64(tstate.wrapping_add(o)))
        };
        let Some(mut frame) = top else {
            thread.cut = Some("the thread state is not in the dump".into());
            return thread;
        };
        let mut seen = HashSet::new();
        while frame != 0 {
            if thread.frames.len() == MAX_FRAMES {
                thread.cut = Some(format!(
                    "more than {MAX_FRAMES} frames: the rest are left out"
                ));
                break;
            }
            if !seen.insert(frame) {
                thread.cut = Some("the frame chain loops".into());
                break;
            }
            match self.frame(frame) {
                Ok((Some(py), previous)) => {
                    thread.frames.push(py);
                    frame = previous;
                }
                Ok((None, previous)) => {
                    // A C-stack shim: it marks the entry of the frames above.
                    if let Some(last) = thread.frames.last_mut() {
                        last.entry = true;
                    }
                    frame = previous;
                }
                Err(why) => {
                    thread.cut = Some(why);
                    break;
                }
            }
        }
        if !self.layout.is_interpreter_frame() {
            // 3.10: every frame object is its own evaluator call.
            for py in &mut thread.frames {
                py.entry = true;
            }
        }
        // Its `threading.Thread`: `self` of Thread._bootstrap.
        thread.thread_object = thread
            .frames
            .iter()
            .rev()
            .find(|f| {
                f.file.ends_with("threading.py")
                    && matches!(
                        f.function.as_str(),
                        "_bootstrap"
                            | "Thread._bootstrap"
                            | "_bootstrap_inner"
                            | "Thread._bootstrap_inner"
                    )
            })
            .and_then(|f| f.first_local);
        if let Some(this) = thread.thread_object {
            thread.name = self.attribute_str(this, "_name");
            thread.daemon = self
                .attribute(this, "_daemonic")
                .and_then(|v| self.bool_object(v));
            thread.join_lock = self.join_lock(this);
        }
        thread
    }

    /// The native lock of a Thread's `_tstate_lock` (3.10 to 3.12; 3.13
    /// joins through a thread handle instead). `_thread.lock` is
    /// `{PyObject_HEAD; PyThread_type_lock lock_lock; ...}`
    /// (Modules/_threadmodule.c): the lock is the word after the 16-byte
    /// object header.
    fn join_lock(&self, thread: u64) -> Option<u64> {
        const LOCK_LOCK: u64 = 16;
        if self.layout.version_at_least(3, 13) {
            return None;
        }
        let lock = self.attribute(thread, "_tstate_lock")?;
        if !self.is_type_named(lock, "_thread.lock") {
            return None;
        }
        self.u64(lock.wrapping_add(LOCK_LOCK)).filter(|l| *l != 0)
    }

    /// One frame: its Python frame (None for a shim) and the next older.
    fn frame(&self, frame: u64) -> Result<(Option<PyFrame>, u64), String> {
        let layout = self.layout;
        let missing = || format!("frame {frame:#x} is not in the dump");
        let previous = if layout.is_interpreter_frame() {
            self.u64(frame.wrapping_add(layout.need("frame_previous")?))
        } else {
            self.u64(frame.wrapping_add(layout.need("frame_back")?))
        }
        .ok_or_else(missing)?;
        if let Some(o) = layout.get("frame_owner").filter(|_| layout.has_shims()) {
            let owner = self
                .memory
                .read(frame.wrapping_add(o), 1)
                .ok_or_else(missing)?[0];
            if owner == OWNED_BY_CSTACK {
                return Ok((None, previous));
            }
        }
        let code = self
            .u64(frame.wrapping_add(layout.need("frame_code")?))
            .ok_or_else(missing)?;
        if !self.is_a(code, self.globals.code_type) {
            return Err(format!(
                "frame {frame:#x} does not point to a code object: the stack ends here"
            ));
        }
        let file = self.string(code.wrapping_add(layout.need("code_filename")?));
        let name_field = layout
            .get("code_qualname")
            .unwrap_or(layout.need("code_name")?);
        let function = self.string(code.wrapping_add(name_field));
        let (Some(file), Some(function)) = (file, function) else {
            return Err(format!(
                "the names of code object {code:#x} are not in the dump"
            ));
        };
        let first_line = self
            .u32(code.wrapping_add(layout.need("code_firstlineno")?))
            .map(|l| i64::from(l as i32))
            .unwrap_or(0);
        let line = self.line(frame, code, first_line);
        let entry = layout
            .get("frame_is_entry")
            .and_then(|o| self.memory.read(frame.wrapping_add(o), 1))
            .is_some_and(|b| b[0] != 0);
        let first_local = self
            .u32(code.wrapping_add(layout.need("code_argcount")?))
            .filter(|n| *n > 0)
            .and_then(|_| self.u64(frame.wrapping_add(layout.need("frame_localsplus").ok()?)))
            .filter(|p| *p != 0);
        Ok((
            Some(PyFrame {
                function,
                file,
                line,
                entry,
                first_local,
            }),
            previous,
        ))
    }

    fn line(&self, frame: u64, code: u64, first_line: i64) -> Option<u32> {
        let layout = self.layout;
        let table = self.bytes(self.u64(code.wrapping_add(layout.get("code_linetable")?))?)?;
        if layout.is_interpreter_frame() {
            let instr = self.u64(frame.wrapping_add(layout.get("frame_instr")?))?;
            let start = code.wrapping_add(layout.get("code_adaptive")?);
            // 3.11 and 3.12 keep the instruction last run (prev_instr),
            // 3.13 the one running (instr_ptr): for a frame that called
            // another, both are the call.
            let units = instr.checked_sub(start)? / 2;
            lines::line_311(&table, first_line, units * 2)
        } else {
            let lasti = self.u32(frame.wrapping_add(layout.get("frame_lasti")?))? as i32;
            if lasti < 0 {
                return u32::try_from(first_line).ok();
            }
            lines::line_310(&table, first_line, u64::from(lasti as u32) * 2)
        }
    }

    /// Whether `object`'s type is the type object at `kind`.
    fn is_a(&self, object: u64, kind: u64) -> bool {
        self.layout
            .get("object_type")
            .and_then(|o| self.u64(object.wrapping_add(o)))
            == Some(kind)
    }

    /// A `str` object's text (compact strings: every `str` CPython makes
    /// for names and file names).
    pub(super) fn string(&self, address: u64) -> Option<String> {
        self.string_object(self.u64(address)?)
    }

    /// The text of the `str` object at `object`.
    pub(super) fn string_object(&self, object: u64) -> Option<String> {
        let layout = self.layout;
        if !self.is_a(object, self.globals.str_type) {
            return None;
        }
        let length = self.u64(object.wrapping_add(layout.get("unicode_length")?))?;
        let state = self.u32(object.wrapping_add(layout.get("unicode_state")?))?;
        // state's bit fields, 3.10 to 3.13: interned (2 bits), kind (3),
        // compact, ascii.
        let kind = (state >> 2) & 7;
        let compact = (state >> 5) & 1 == 1;
        let ascii = (state >> 6) & 1 == 1;
        if !compact || length > MAX_STRING {
            return None;
        }
        let header = if ascii {
            layout.get("ascii_size")?
        } else {
            layout.get("compact_size")?
        };
        let width = u64::from(kind.max(1));
        let raw = self
            .memory
            .read(object.wrapping_add(header), (length * width) as usize)?;
        Some(match width {
            1 => raw.iter().map(|&b| char::from(b)).collect(),
            2 => char::decode_utf16(
                raw.chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]])),
            )
            .map(|c| c.unwrap_or('\u{fffd}'))
            .collect(),
            _ => raw
                .chunks_exact(4)
                .map(|c| {
                    char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .unwrap_or('\u{fffd}')
                })
                .collect(),
        })
    }

    /// A `bytes` object's content.
    fn bytes(&self, object: u64) -> Option<Vec<u8>> {
        let layout = self.layout;
        if !self.is_a(object, self.globals.bytes_type) {
            return None;
        }
        let size = self.u64(object.wrapping_add(layout.get("bytes_size")?))?;
        if size > MAX_LINETABLE {
            return None;
        }
        self.memory.read(
            object.wrapping_add(layout.get("bytes_data")?),
            size as usize,
        )
    }
}
