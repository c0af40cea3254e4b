//! The stack walker's view of the symbol sources, for one dump.
//!
//! [`DumpSymbols`] implements minidump-unwind's `SymbolProvider` over the
//! run's shared [`Sources`], and remembers, for the report, which source
//! named each frame and which modules it looked up. It also reads export
//! tables from the dump's own memory, which only this dump has.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use minidump::{Module, UnifiedMemoryList};
use minidump_unwind::{
    FileError, FileKind, FillSymbolError, FrameSymbolizer, FrameWalker, SymbolProvider,
};

use super::identity::{same_code_id, Format, Identity};
use super::native::{pe, AddressTable, NativeSymbols, Symbol};
use super::sources::{Resolution, Sources};
use super::symfile::Named;
use super::unwind::pe::{FileImage, PeUnwinder};
use super::unwind::{Callee, Registers, ReturnAddress, Unwinder, NAMES, RIP, RSP};
use crate::model::{ModuleSymbols, SymbolSource};

mod adapters;
mod image;

use adapters::*;
use image::*;

/// What the report says about one module's symbols.
#[derive(Debug, Clone)]
pub(crate) struct ModuleOutcome {
    pub status: ModuleSymbols,
    pub source: SymbolSource,
    pub file: Option<String>,
    pub tried: Vec<String>,
    /// Where frames of the module were unwound from, when no .sym file
    /// gave the CFI: the binary's (or its image's) unwind tables.
    pub unwind: Option<String>,
}

/// A name for an address in an unloaded module.
#[derive(Debug, Clone)]
pub(crate) struct UnloadedName {
    pub function: String,
    /// Only the nearest export or symbol before the address.
    pub guessed: bool,
    pub function_offset: u64,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub source: SymbolSource,
}

#[derive(Default)]
struct State<'a> {
    /// Instruction address -> the source that named it.
    frames: HashMap<u64, SymbolSource>,
    /// Instruction addresses whose name is only the nearest export or
    /// symbol before them (see `Symbol::guessed`).
    guessed: std::collections::HashSet<u64>,
    /// Module base -> its search result.
    modules: HashMap<u64, Arc<Resolution>>,
    /// Module base -> exports read from the dump's memory (None: none there).
    memory_exports: HashMap<u64, Option<Arc<AddressTable>>>,
    /// Module base -> its unwind tables (None: none found).
    unwinders: HashMap<u64, Option<Arc<dyn Unwinder + 'a>>>,
    /// Module base -> where its frames were unwound from, once one was.
    unwound: HashMap<u64, String>,
    /// Instructions of frames the walker has kept: the contexts' own, and
    /// return address - 1 of callers found by CFI. Stack-scan validation
    /// never takes the name from these.
    kept: HashSet<u64>,
    notes: BTreeSet<String>,
}

/// The symbol provider of one dump.
pub(crate) struct DumpSymbols<'a> {
    sources: &'a Sources,
    memory: Option<&'a UnifiedMemoryList<'a>>,
    state: Mutex<State<'a>>,
}

impl<'a> DumpSymbols<'a> {
    pub(crate) fn new(sources: &'a Sources, memory: Option<&'a UnifiedMemoryList<'a>>) -> Self {
        DumpSymbols {
            sources,
            memory,
            state: Mutex::new(State::default()),
        }
    }

    /// Marks the instruction pointers of the dump's thread and exception
    /// contexts: frames 0 stop anywhere, not after a call, and stack-scan
    /// validation must not take their names.
    pub(crate) fn with_context_instructions(
        self,
        instructions: impl IntoIterator<Item = u64>,
    ) -> Self {
        self.state().kept.extend(instructions);
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<'a>> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Which source named the frame at `instruction`.
    pub(crate) fn frame_source(&self, instruction: u64) -> SymbolSource {
        self.state()
            .frames
            .get(&instruction)
            .copied()
            .unwrap_or(SymbolSource::None)
    }

    /// Whether the name given to the frame at `instruction` is only the
    /// nearest export or symbol before it.
    pub(crate) fn frame_guessed(&self, instruction: u64) -> bool {
        self.state().guessed.contains(&instruction)
    }

    /// What was found for the module loaded at `base`; `None` when no frame
    /// needed it.
    pub(crate) fn module_outcome(&self, base: u64) -> Option<ModuleOutcome> {
        let state = self.state();
        let resolution = state.modules.get(&base)?;
        let memory = state.memory_exports.get(&base).cloned().flatten();
        let mut outcome = ModuleOutcome {
            status: resolution.status,
            source: resolution.source(),
            file: resolution.file.clone(),
            tried: resolution.tried.clone(),
            unwind: state.unwound.get(&base).cloned(),
        };
        if outcome.source == SymbolSource::None {
            if let Some(table) = memory {
                outcome.status = ModuleSymbols::Loaded;
                outcome.source = SymbolSource::Exports;
                outcome.file = Some("the module's image in the dump".to_string());
                outcome
                    .tried
                    .push(format!("{} exports in the dump's memory", table.len()));
            }
        }
        Some(outcome)
    }

    /// Problems worth a line in the report: refused files, failed servers,
    /// readers that failed on a damaged file.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let state = self.state();
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut bases: Vec<&u64> = state.modules.keys().collect();
        bases.sort();
        for base in bases {
            let resolution = &state.modules[base];
            // A reader that failed inside (a damaged file) says so in every
            // report whose dump used it.
            let failure = resolution.native.as_ref().and_then(|n| n.failure());
            for warning in resolution.warnings.iter().chain(&failure) {
                if seen.insert(warning.clone()) {
                    out.push(warning.clone());
                }
            }
        }
        out.extend(state.notes.iter().cloned());
        out.extend(self.sources.notes().iter().cloned());
        out
    }

    async fn resolve(&self, module: &(dyn Module + Sync)) -> Arc<Resolution> {
        let resolution = self.sources.resolve(&Identity::of(module)).await;
        self.state()
            .modules
            .insert(module.base_address(), resolution.clone());
        resolution
    }

    /// Export table of the module's image in the dump's memory, when the
    /// dump holds it (full-memory dumps) and its headers carry the module's
    /// own timestamp and size.
    fn memory_exports(&self, module: &(dyn Module + Sync)) -> Option<Arc<AddressTable>> {
        let base = module.base_address();
        if let Some(known) = self.state().memory_exports.get(&base) {
            return known.clone();
        }
        let table = self.read_memory_exports(module);
        self.state().memory_exports.insert(base, table.clone());
        table
    }

    fn read_memory_exports(&self, module: &(dyn Module + Sync)) -> Option<Arc<AddressTable>> {
        let memory = self.memory?;
        let identity = Identity::of(module);
        if identity.format() != Format::Pe {
            return None;
        }
        let base = module.base_address();
        let size = module.size();
        let read = |rva: u64, len: usize| {
            read_memory(memory, base.checked_add(rva)?, len).filter(|b| b.len() == len)
        };
        let (code_id, table) = pe::read_image(&read, size)?;
        if let Some(want) = &identity.code_id {
            if !same_code_id(want, &code_id) {
                self.state().notes.insert(format!(
                    "{}: the image in the dump's memory has timestamp+size {code_id}, \
                     the module record {}: its exports were not used",
                    identity.code_name(),
                    want.to_ascii_uppercase()
                ));
                return None;
            }
        }
        (!table.is_empty()).then(|| Arc::new(table))
    }

    /// The unwind tables of a module without a .sym file: from its binary
    /// (found by the search, or now by code id or build id), else from its
    /// image in a full-memory dump. Once per module and dump; the files'
    /// tables are shared by the run.
    async fn unwinder(&self, module: &(dyn Module + Sync)) -> Option<Arc<dyn Unwinder + 'a>> {
        let base = module.base_address();
        if let Some(known) = self.state().unwinders.get(&base) {
            return known.clone();
        }
        let resolution = self.resolve(module).await;
        let found: Option<Arc<dyn Unwinder + 'a>> = match self.sources.unwinder(&resolution) {
            Some(unwinder) => Some(unwinder),
            None => self.memory_unwinder(module),
        };
        self.state().unwinders.insert(base, found.clone());
        found
    }

    fn memory_unwinder(&self, module: &(dyn Module + Sync)) -> Option<Arc<dyn Unwinder + 'a>> {
        let memory = self.memory?;
        let identity = Identity::of(module);
        if identity.format() != Format::Pe {
            return None;
        }
        let image = MemoryImage {
            memory,
            base: module.base_address(),
        };
        let what = ".pdata of the module's image in the dump".to_string();
        let (unwinder, code_id) = PeUnwinder::new(image, what)?;
        if let Some(want) = &identity.code_id {
            if !same_code_id(want, &code_id) {
                return None; // the export-table reader says why
            }
        }
        Some(Arc::new(unwinder))
    }

    /// The bytes of a PE module's image: what a reader of its constant data
    /// (a C++ exception's throw tables) needs.
    pub(crate) async fn module_image(&self, module: &(dyn Module + Sync)) -> ModuleImage<'a> {
        let memory = self.memory.map(|memory| MemoryImage {
            memory,
            base: module.base_address(),
        });
        let resolution = self.resolve(module).await;
        let file = match Identity::of(module).format() {
            Format::Pe => self
                .sources
                .binary(&resolution)
                .and_then(|path| FileImage::open(&path)),
            _ => None,
        };
        ModuleImage { memory, file }
    }

    /// Whether the unwind tables say a stack-scan candidate for a caller's
    /// frame at `instruction` (return address - 1) cannot be one.
    async fn not_a_return_address(&self, module: &(dyn Module + Sync), instruction: u64) -> bool {
        if self.state().kept.contains(&instruction) {
            return false;
        }
        let Some(unwinder) = self.unwinder(module).await else {
            return false;
        };
        let Some(rva) = instruction.checked_sub(module.base_address()) else {
            return false;
        };
        let Some(candidate) = rva.checked_add(1) else {
            return false;
        };
        unwinder.return_address(candidate) == Some(ReturnAddress::Impossible)
    }

    /// The function an address lies in, with the function's start and the
    /// source of the name: what a stack search asks of a candidate return
    /// address (pass the address just before it: the call instruction).
    pub(crate) async fn name_address(
        &self,
        module: &(dyn Module + Sync),
        address: u64,
    ) -> Option<(String, u64, SymbolSource)> {
        let mut frame = Collect::new(address);
        // An error only says the module has no symbols that rule an address
        // out; a name may still have been set (export tables).
        let _ = self.fill_symbol(module, &mut frame).await;
        let (function, base) = frame.function?;
        Some((function, base, self.frame_source(address)))
    }

    /// Names an address in an unloaded module, from its binary or symbols
    /// found by its code id.
    pub(crate) async fn symbolize_unloaded(
        &self,
        name: &str,
        code_id: Option<String>,
        base: u64,
        size: u64,
        address: u64,
    ) -> Option<UnloadedName> {
        let identity = Identity {
            code_file: name.to_string(),
            code_id,
            debug_file: None,
            debug_id: None,
        };
        let resolution = self.sources.resolve(&identity).await;
        let offset = address.checked_sub(base)?;
        let placed = resolution.identity.at(base, size);
        if let Some(sym) = &resolution.sym {
            let mut frame = Collect::new(address);
            let named = sym.fill_symbol(&placed, &mut frame);
            let (function, function_base) = frame.function?;
            return Some(UnloadedName {
                function,
                guessed: named == Named::Public,
                function_offset: address.wrapping_sub(function_base),
                file: frame.file,
                line: frame.line,
                source: SymbolSource::Sym,
            });
        }
        let native = resolution.native.as_ref()?;
        let symbol = native.lookup(offset)?;
        Some(UnloadedName {
            guessed: symbol.guessed,
            function_offset: offset.wrapping_sub(symbol.function_rva),
            function: symbol.function,
            file: symbol.file,
            line: symbol.line,
            source: native.source(),
        })
    }
}

fn apply(frame: &mut (dyn FrameSymbolizer + Send), base: u64, symbol: &Symbol) {
    let function_base = base.wrapping_add(symbol.function_rva);
    frame.set_function(&symbol.function, function_base, 0);
    if let Some(file) = &symbol.file {
        frame.set_source_file(file, symbol.line.unwrap_or(0), function_base);
    }
    for (name, file, line) in &symbol.inlines {
        frame.add_inline_frame(name, file.as_deref(), *line);
    }
}

#[async_trait::async_trait]
impl SymbolProvider for DumpSymbols<'_> {
    async fn fill_symbol(
        &self,
        module: &(dyn Module + Sync),
        frame: &mut (dyn FrameSymbolizer + Send),
    ) -> Result<(), FillSymbolError> {
        let resolution = self.resolve(module).await;
        let base = module.base_address();
        let instruction = frame.get_instruction();
        if let Some(sym) = &resolution.sym {
            let placed = resolution.identity.at(base, module.size());
            let named = sym.fill_symbol(&placed, frame);
            if named != Named::Nothing {
                let mut state = self.state();
                state.frames.insert(instruction, SymbolSource::Sym);
                if named == Named::Public {
                    state.guessed.insert(instruction);
                }
            }
            return Ok(());
        }
        let rva = instruction.checked_sub(base).ok_or(FillSymbolError {})?;
        // A stack-scan candidate the module's unwind tables rule out (no
        // function holds it, or no call precedes it) is no function's: the
        // scanner then passes over it.
        if self.not_a_return_address(module, instruction).await {
            return Ok(());
        }
        if let Some(native) = &resolution.native {
            let source = native.source();
            if let Some(symbol) = native.lookup(rva) {
                apply(frame, base, &symbol);
                let mut state = self.state();
                state.frames.insert(instruction, source);
                if symbol.guessed {
                    state.guessed.insert(instruction);
                }
            }
            // Only debug information says an address is no function's;
            // exports say too little, so the stack scanner treats such a
            // module as one without symbols.
            return match source {
                SymbolSource::Exports => Err(FillSymbolError {}),
                _ => Ok(()),
            };
        }
        if let Some(table) = self.memory_exports(module) {
            if let Some(symbol) = table.lookup(rva) {
                apply(frame, base, &symbol);
                let mut state = self.state();
                state.frames.insert(instruction, SymbolSource::Exports);
                if symbol.guessed {
                    state.guessed.insert(instruction);
                }
            }
        }
        Err(FillSymbolError {})
    }

    async fn walk_frame(
        &self,
        module: &(dyn Module + Sync),
        walker: &mut (dyn FrameWalker + Send),
    ) -> Option<()> {
        let resolution = self.resolve(module).await;
        if let Some(sym) = &resolution.sym {
            let placed = resolution.identity.at(module.base_address(), module.size());
            let mut recording = RecordingWalker {
                inner: walker,
                return_address: None,
            };
            let walked = sym.walk_frame(&placed, &mut recording);
            if let (Some(()), Some(ra)) = (walked, recording.return_address) {
                self.state().kept.insert(ra.wrapping_sub(1));
            }
            return walked;
        }
        // Without a .sym file: the binary's own unwind tables (x86-64 only;
        // other CPUs fall back to frame pointers and stack scanning).
        let mut registers = Registers::default();
        for (number, name) in NAMES.iter().enumerate() {
            if let Some(value) = walker.get_callee_register(name) {
                registers.set(number, value);
            }
        }
        let (Some(rsp), Some(_)) = (registers.get(RSP), registers.get(RIP)) else {
            return None;
        };
        let unwinder = self.unwinder(module).await?;
        let base = module.base_address();
        let callee = Callee {
            rva: walker.get_instruction().checked_sub(base)?,
            first: !walker.has_grand_callee(),
        };
        let caller = {
            let stack = |address: u64| walker.get_register_at_address(address);
            unwinder.unwind(callee, &registers, &stack)?
        };
        let (caller_rip, caller_rsp) = (caller.get(RIP)?, caller.get(RSP)?);
        // A caller below its callee is a wrong answer, which would end the
        // walk: let the other methods try instead.
        if caller_rsp <= rsp {
            return None;
        }
        walker.set_cfa(caller_rsp)?;
        walker.set_ra(caller_rip)?;
        for &number in unwinder.nonvolatile() {
            match caller.get(number) {
                Some(value) => {
                    walker.set_caller_register(NAMES[number], value);
                }
                None => walker.clear_caller_register(NAMES[number]),
            }
        }
        let mut state = self.state();
        state.kept.insert(caller_rip.wrapping_sub(1));
        state
            .unwound
            .entry(base)
            .or_insert_with(|| unwinder.describe());
        Some(())
    }

    async fn get_file_path(
        &self,
        module: &(dyn Module + Sync),
        file_kind: FileKind,
    ) -> Result<PathBuf, FileError> {
        let resolution = self.resolve(module).await;
        match file_kind {
            FileKind::Binary => self.sources.binary(&resolution).ok_or(FileError::NotFound),
            _ => Err(FileError::NotFound),
        }
    }
}
