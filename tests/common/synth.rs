//! Minidumps built in the test, for situations no public dump shows.

use minidump_synth::{
    amd64_context, DumpString, Exception, Memory, Module, SynthMinidump, SystemInfo, Thread,
    ThreadName, UnloadedModule,
};
use test_assembler::{Endian, Section};

pub const EXE_BASE: u64 = 0x1_4000_0000;
pub const DXC_BASE: u64 = 0x7ffa_1000_0000;

/// A Windows amd64 process whose crashing thread's instruction pointer lies
/// in dxcompiler.dll after it was unloaded (and whose caller is in the exe):
/// the shape of a call into an unloaded DLL at exit.
pub fn crash_in_unloaded_module() -> Vec<u8> {
    let e = Endian::Little;
    let exe_name = DumpString::new("C:\\app\\webgpu-app.exe", e);
    let dxc_name = DumpString::new("C:\\app\\dxcompiler.dll", e);
    let exe = Module::new(e, EXE_BASE, 0x10000, &exe_name, 0x6543_2100, 0, None);
    let dxc = UnloadedModule::new(e, DXC_BASE, 0x20_0000, &dxc_name, 0x6000_0000, 0);

    // Stack of the crashing thread: the return address into the exe on top.
    let stack_base = 0x9_0000u64;
    let stack = Section::with_endian(e)
        .D64(EXE_BASE + 0x1234)
        .append_repeated(0, 0x100);
    let stack = Memory::with_section(stack, stack_base);
    let context = amd64_context(e, DXC_BASE + 0x4_2a10, stack_base);
    let crashing = Thread::new(e, 0x1f00, &stack, &context);

    let idle_stack =
        Memory::with_section(Section::with_endian(e).append_repeated(0, 0x40), 0xa_0000);
    let idle_context = amd64_context(e, EXE_BASE + 0x2000, 0xa_0000);
    let idle = Thread::new(e, 0x2a00, &idle_stack, &idle_context);
    let main_name = DumpString::new("main", e);
    let worker_name = DumpString::new("dawn-worker\x1b[31m", e);

    let mut exception = Exception::new(e);
    exception.thread_id = 0x1f00;
    exception.exception_record.exception_code = 0xc000_0005;
    exception.exception_record.exception_address = DXC_BASE + 0x4_2a10;
    exception.exception_record.number_parameters = 2;
    exception.exception_record.exception_information[0] = 8; // execute
    exception.exception_record.exception_information[1] = DXC_BASE + 0x4_2a10;

    let system = SystemInfo::new(e)
        .set_processor_architecture(9) // PROCESSOR_ARCHITECTURE_AMD64
        .set_platform_id(2); // VER_PLATFORM_WIN32_NT

    SynthMinidump::with_endian(e)
        .add_system_info(system)
        .add_module(exe)
        .add_unloaded_module(dxc)
        .add(exe_name)
        .add(dxc_name)
        .add_thread(crashing)
        .add_thread(idle)
        .add_memory(stack)
        .add_memory(idle_stack)
        .add(context)
        .add(idle_context)
        .add_thread_name(ThreadName::new(e, 0x1f00, Some(&main_name)))
        .add_thread_name(ThreadName::new(e, 0x2a00, Some(&worker_name)))
        .add(main_name)
        .add(worker_name)
        .add_exception(exception)
        .finish()
        .expect("synthetic dump")
}

/// A module of a synthetic Windows dump.
pub struct WinModule {
    pub path: &'static str,
    pub base: u64,
    pub size: u32,
    pub timestamp: u32,
    /// The CodeView record: PDB GUID (as stored), age, PDB file name. Wine's
    /// own dumps have none.
    pub pdb: Option<([u8; 16], u32, &'static str)>,
}

/// A Windows amd64 dump whose crashing thread is at `crash_ip`, with the
/// given loaded and unloaded modules and extra memory regions (for example
/// a module's image, as a full-memory dump holds it).
pub fn windows_crash(
    modules: &[WinModule],
    unloaded: &[WinModule],
    crash_ip: u64,
    memory: Vec<(u64, Vec<u8>)>,
) -> Vec<u8> {
    windows_threads(modules, unloaded, &[crash_ip], memory)
}

/// [`windows_crash`] with one thread per address in `ips` (the first one
/// crashing), so that a frame lands in each module named there.
pub fn windows_threads(
    modules: &[WinModule],
    unloaded: &[WinModule],
    ips: &[u64],
    memory: Vec<(u64, Vec<u8>)>,
) -> Vec<u8> {
    let stacks = ips
        .iter()
        .enumerate()
        .map(|(i, ip)| (*ip, 0x9_0000u64 + 0x1000 * i as u64, vec![0; 0x100]))
        .collect();
    windows_stacks(modules, unloaded, stacks, memory)
}

/// [`windows_crash`] with the crashing thread's stack given: its base (the
/// stack pointer of the context) and its bytes.
pub fn windows_crash_on_stack(
    modules: &[WinModule],
    unloaded: &[WinModule],
    crash_ip: u64,
    (stack_base, stack_bytes): (u64, Vec<u8>),
    memory: Vec<(u64, Vec<u8>)>,
) -> Vec<u8> {
    windows_stacks(
        modules,
        unloaded,
        vec![(crash_ip, stack_base, stack_bytes)],
        memory,
    )
}

/// Threads given as (instruction pointer, stack base, stack bytes), the
/// first one crashing.
fn windows_stacks(
    modules: &[WinModule],
    unloaded: &[WinModule],
    threads: Vec<(u64, u64, Vec<u8>)>,
    memory: Vec<(u64, Vec<u8>)>,
) -> Vec<u8> {
    let crash_ip = threads[0].0;
    let e = Endian::Little;
    let system = SystemInfo::new(e)
        .set_processor_architecture(9)
        .set_platform_id(2);
    let mut dump = SynthMinidump::with_endian(e).add_system_info(system);
    for m in modules {
        let name = DumpString::new(m.path, e);
        let mut module = Module::new(e, m.base, m.size, &name, m.timestamp, 0, None);
        if let Some((guid, age, pdb)) = m.pdb {
            let cv = Section::with_endian(e)
                .append_bytes(b"RSDS")
                .append_bytes(&guid)
                .D32(age)
                .append_bytes(pdb.as_bytes())
                .D8(0);
            module = module.cv_record(&cv);
            dump = dump.add(cv);
        }
        dump = dump.add_module(module).add(name);
    }
    for m in unloaded {
        let name = DumpString::new(m.path, e);
        let module = UnloadedModule::new(e, m.base, m.size, &name, m.timestamp, 0);
        dump = dump.add_unloaded_module(module).add(name);
    }
    for (i, (ip, stack_base, bytes)) in threads.into_iter().enumerate() {
        let stack = Memory::with_section(Section::with_endian(e).append_bytes(&bytes), stack_base);
        let context = amd64_context(e, ip, stack_base);
        let thread = Thread::new(e, 0x1f00 + i as u32, &stack, &context);
        dump = dump.add_thread(thread).add_memory(stack).add(context);
    }
    let mut exception = Exception::new(e);
    exception.thread_id = 0x1f00;
    exception.exception_record.exception_code = 0xc000_0005;
    exception.exception_record.exception_address = crash_ip;
    dump = dump.add_exception(exception);
    for (address, bytes) in memory {
        let region = Memory::with_section(Section::with_endian(e).append_bytes(&bytes), address);
        dump = dump.add_memory(region);
    }
    dump.finish().expect("synthetic dump")
}

/// A Linux amd64 dump of a process that crashed at `crash_ip` in a shared
/// object with the given GNU build id, loaded from `path` at `base`.
pub fn linux_crash(path: &str, base: u64, size: u32, build_id: &[u8], crash_ip: u64) -> Vec<u8> {
    let e = Endian::Little;
    let system = SystemInfo::new(e)
        .set_processor_architecture(9)
        .set_platform_id(0x8201); // MD_OS_LINUX
    let name = DumpString::new(path, e);
    let cv = Section::with_endian(e)
        .D32(0x4270_454c) // CV_SIGNATURE_ELF ("BpEL")
        .append_bytes(build_id);
    let module = Module::new(e, base, size, &name, 0, 0, None).cv_record(&cv);
    let stack_base = 0x7ffc_0000_0000u64;
    let stack = Memory::with_section(
        Section::with_endian(e).append_repeated(0, 0x100),
        stack_base,
    );
    let context = amd64_context(e, crash_ip, stack_base);
    let thread = Thread::new(e, 4242, &stack, &context);
    let mut exception = Exception::new(e);
    exception.thread_id = 4242;
    exception.exception_record.exception_code = 11; // SIGSEGV
    exception.exception_record.exception_address = crash_ip;
    SynthMinidump::with_endian(e)
        .add_system_info(system)
        .add_module(module)
        .add(name)
        .add(cv)
        .add_thread(thread)
        .add_memory(stack)
        .add(context)
        .add_exception(exception)
        .finish()
        .expect("synthetic dump")
}

/// A PE file laid out as the loader maps it (sections at their RVAs): what
/// a full-memory dump holds of a module.
pub fn mapped_image(file: &[u8]) -> Vec<u8> {
    use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, PeFile64};
    use object::LittleEndian as LE;
    let pe = PeFile64::parse(file).unwrap();
    let optional = pe.nt_headers().optional_header();
    let mut image = vec![0u8; optional.size_of_image() as usize];
    let headers = optional.size_of_headers() as usize;
    image[..headers].copy_from_slice(&file[..headers]);
    for section in pe.section_table().iter() {
        let va = section.virtual_address.get(LE) as usize;
        let raw = section.pe_data(file).unwrap();
        let n = raw.len().min(image.len() - va);
        image[va..va + n].copy_from_slice(&raw[..n]);
    }
    image
}
