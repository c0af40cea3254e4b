//! The faulting thread's state at a crash, read with ptrace, in the shape
//! minidump-writer takes: what a signal handler in the process would have
//! received.

use minidump_writer::crash_context::CrashContext;
use nix::sys::ptrace::{self, regset};
use nix::unistd::Pid;

/// The faulting thread's siginfo and registers, as minidump-writer's crash
/// context (what a signal handler would have received).
#[cfg(target_arch = "x86_64")]
pub(super) fn crash_context(pid: Pid, tid: Pid) -> Option<CrashContext> {
    use libc::{
        REG_CR2, REG_CSGSFS, REG_EFL, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_R8,
        REG_R9, REG_RAX, REG_RBP, REG_RBX, REG_RCX, REG_RDI, REG_RDX, REG_RIP, REG_RSI, REG_RSP,
    };
    let info = ptrace::getsiginfo(tid).ok()?;
    let regs = ptrace::getregs(tid).ok()?;
    let fp = ptrace::getregset::<regset::NT_PRFPREG>(tid).ok()?;
    // SAFETY: CrashContext is a plain C struct (ucontext, fpstate, siginfo)
    // for which all-zero bytes are a valid value. Of siginfo's union, a
    // fault the kernel raised (si_code > 0) carries the faulting address; a
    // signal a process sent carries its sender's pid and uid.
    let (mut context, fault, sender): (CrashContext, _, _) = unsafe {
        let fault = (info.si_code > 0).then(|| info.si_addr() as u64);
        let sender = (info.si_code <= 0).then(|| (info.si_pid() as u32, info.si_uid()));
        (std::mem::zeroed(), fault, sender)
    };
    context.pid = pid.as_raw();
    context.tid = tid.as_raw();
    context.siginfo.ssi_signo = info.si_signo as u32;
    context.siginfo.ssi_errno = info.si_errno;
    context.siginfo.ssi_code = info.si_code;
    context.siginfo.ssi_addr = fault.unwrap_or(0);
    if let Some((sender, uid)) = sender {
        context.siginfo.ssi_pid = sender;
        context.siginfo.ssi_uid = uid;
    }
    let gregs = &mut context.context.uc_mcontext.gregs;
    for (index, value) in [
        (REG_R8, regs.r8),
        (REG_R9, regs.r9),
        (REG_R10, regs.r10),
        (REG_R11, regs.r11),
        (REG_R12, regs.r12),
        (REG_R13, regs.r13),
        (REG_R14, regs.r14),
        (REG_R15, regs.r15),
        (REG_RDI, regs.rdi),
        (REG_RSI, regs.rsi),
        (REG_RBP, regs.rbp),
        (REG_RBX, regs.rbx),
        (REG_RDX, regs.rdx),
        (REG_RAX, regs.rax),
        (REG_RCX, regs.rcx),
        (REG_RSP, regs.rsp),
        (REG_RIP, regs.rip),
        (REG_EFL, regs.eflags),
        (REG_CSGSFS, regs.cs | (regs.gs << 16) | (regs.fs << 32)),
        (REG_CR2, context.siginfo.ssi_addr),
    ] {
        gregs[index as usize] = value as i64;
    }
    let float = &mut context.float_state;
    float.cwd = fp.cwd;
    float.swd = fp.swd;
    float.ftw = fp.ftw;
    float.fop = fp.fop;
    float.rip = fp.rip;
    float.rdp = fp.rdp;
    float.mxcsr = fp.mxcsr;
    float.mxcr_mask = fp.mxcr_mask;
    float.st_space = fp.st_space;
    float.xmm_space = fp.xmm_space;
    Some(context)
}

/// Other CPUs: the dump names the faulting thread, without the signal's
/// context (the crash then reads as a requested dump).
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn crash_context(_pid: Pid, _tid: Pid) -> Option<CrashContext> {
    None
}
