//! How a function's name is spelled: for display ([`without_symbol_version`],
//! [`bare_name`]) and for matching and signatures ([`signature_name`], which
//! is [`bare_name`] with the build-specific parts taken off as well). Every
//! module that compares or groups function names goes through these, so one
//! frame gets one spelling whichever symbol file, debugger or log named it.

/// A function name without the ELF symbol version a symbol table may
/// give it (`__libc_start_main@@GLIBC_2.34` -> `__libc_start_main`,
/// `memcpy@GLIBC_2.2.5` -> `memcpy`): how it is shown. Only a version
/// (a letter or `_` after the `@`) goes; a 32-bit Windows name's
/// argument size (`_Sleep@4`) stays.
pub fn without_symbol_version(name: &str) -> &str {
    let Some(at) = name.find('@').filter(|&at| at > 0) else {
        return name;
    };
    let version = name[at..].trim_start_matches('@');
    let is_version = name[at..].len() - version.len() <= 2
        && version.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
    if is_version {
        &name[..at]
    } else {
        name
    }
}

/// A function name without its parameter list (`exit(int)` -> `exit`), for
/// symbol files that keep C++ signatures. MSVC's quoted names
/// (`` `dynamic atexit destructor for 'x'' ``) are kept whole.
pub fn bare_name(name: &str) -> &str {
    const ANONYMOUS: &str = "(anonymous namespace)";
    if name.starts_with('`') {
        return name;
    }
    // `(anonymous namespace)::f()`: the parameter list is the first `(`
    // that does not open an anonymous namespace's name.
    let mut from = 0;
    while let Some(i) = name[from..].find('(').map(|i| from + i) {
        if name[i..].starts_with(ANONYMOUS) {
            from = i + ANONYMOUS.len();
            continue;
        }
        return if i > 0 { &name[..i] } else { name };
    }
    name
}

/// The function an MSVC local-scope name is in: Visual Studio names a
/// lambda or a local class by its enclosing function and block
/// (`_execute_onexit_table::__l2::<lambda>`, `f::__l3::Local::g`), and its
/// code runs as part of that function, so a table that knows the function
/// knows the frame. `None` for any other name.
pub fn msvc_enclosing_function(name: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = name[from..].find("::__l").map(|i| from + i) {
        let rest = &name[at + 5..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with("::") && at > 0 {
            return Some(&name[..at]);
        }
        from = at + 5;
    }
    None
}

/// A function's name as crash signatures and the wait and culprit tables
/// spell it, so one failure keeps one signature whichever build or debug
/// file named it: [`bare_name`] (no parameters), and then glibc's
/// internal aliases under their public name (`__GI_exit` -> `exit`), no
/// symbol version (`__libc_start_main@@GLIBC_2.34`; unlike
/// [`without_symbol_version`], any `@` suffix goes), and no compiler clone
/// suffix (`.constprop.0`, `.isra.0`, `.part.0`, `.cold`,
/// `.lto_priv.0`, `.llvm.123`).
pub(crate) fn signature_name(function: &str) -> &str {
    let mut name = bare_name(function);
    if let Some(at) = name.find('@') {
        name = &name[..at];
    }
    for clone in [
        ".constprop.",
        ".isra.",
        ".part.",
        ".cold",
        ".lto_priv.",
        ".llvm.",
    ] {
        if let Some(at) = name.find(clone) {
            name = &name[..at];
        }
    }
    name.strip_prefix("__GI_").unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_versions_are_not_shown() {
        for (name, shown) in [
            ("__libc_start_main@@GLIBC_2.34", "__libc_start_main"),
            ("memcpy@GLIBC_2.2.5", "memcpy"),
            ("pthread_cond_wait@@GLIBC_2.3.2", "pthread_cond_wait"),
            ("_Sleep@4", "_Sleep@4"),
            ("@plt", "@plt"),
            ("operator new(unsigned long)", "operator new(unsigned long)"),
            ("f@@", "f@@"),
            ("a@b c", "a@b c"),
        ] {
            assert_eq!(without_symbol_version(name), shown, "{name}");
        }
    }

    #[test]
    fn msvc_local_scopes_name_their_function() {
        assert_eq!(
            msvc_enclosing_function("_execute_onexit_table::__l2::<lambda>"),
            Some("_execute_onexit_table")
        );
        assert_eq!(
            msvc_enclosing_function("ns::Widget::Paint::__l13::Local::Draw"),
            Some("ns::Widget::Paint")
        );
        for plain in [
            "__lll_lock_wait",
            "a::__lock::b",
            "::__l2::x",
            "a::__l::b",
            "f",
        ] {
            assert_eq!(msvc_enclosing_function(plain), None, "{plain}");
        }
    }

    #[test]
    fn bare_names() {
        assert_eq!(bare_name("exit(int)"), "exit");
        assert_eq!(bare_name("exit"), "exit");
        assert_eq!(
            bare_name("(anonymous namespace)::deliver_result()"),
            "(anonymous namespace)::deliver_result"
        );
        assert_eq!(
            bare_name("a::(anonymous namespace)::b::(anonymous namespace)::f(int, char)"),
            "a::(anonymous namespace)::b::(anonymous namespace)::f"
        );
        assert_eq!(bare_name("(anonymous namespace)"), "(anonymous namespace)");
        assert_eq!(
            bare_name("`dynamic atexit destructor for 'x''"),
            "`dynamic atexit destructor for 'x''"
        );
        assert_eq!(bare_name("(weird)"), "(weird)");
    }

    #[test]
    fn names_are_spelled_the_same_whichever_build_named_them() {
        for (name, want) in [
            ("__GI_exit", "exit"),
            ("__GI___libc_write", "__libc_write"),
            ("__libc_start_main@@GLIBC_2.34", "__libc_start_main"),
            ("memcpy@GLIBC_2.2.5", "memcpy"),
            ("parse_header.constprop.0", "parse_header"),
            ("scan_block.isra.0.cold", "scan_block"),
            ("encode.part.3", "encode"),
            ("helper.lto_priv.0", "helper"),
            ("ns::Engine::run(int)", "ns::Engine::run"),
            (
                "`anonymous namespace'::CrashFunction",
                "`anonymous namespace'::CrashFunction",
            ),
        ] {
            assert_eq!(signature_name(name), want, "{name}");
        }
    }
}
