//! The conditions of a `[[match]]` table, one file each: its TOML value,
//! its compiled form, how it is matched, its weight and its doc text.
//!
//! The list below is the only place that names them all. From it come the
//! table's schema ([`MatchSpec`], read by serde so an unknown key is still
//! reported with its path), its compiled form ([`Conditions`]), the loader's
//! compilation ([`compile`]), matching ([`Conditions::on_dump`],
//! [`Conditions::on_thread`]), ranking ([`Conditions::specificity`]), the
//! default label and the generated docs ([`ON_DUMP`], [`ON_THREAD`]).
//! Adding a condition is a file here and one line in the list
//! (CONTRIBUTING.md, "Adding a rule condition").
//!
//! The order of the list is the order conditions are checked in, and so
//! the order of the evidence they state.

use serde::Deserialize;

use crate::model::{Kind, Thread};

mod abort;
mod access_in_module;
mod access_in_unloaded_module;
mod captured;
mod condition;
mod cpp_exception_type;
mod crash;
mod deadlock;
mod evidence;
mod exception;
mod exit;
pub(super) mod found;
mod frames;
mod functions;
mod holder_blocked;
mod ip_in_unloaded_module;
mod modules_loaded;
mod modules_unloaded;
mod process_exiting;
mod said;
mod thread_blocked;
mod thread_exiting;
mod thread_name;
mod waits_for;

use condition::{Compiler, Condition, OnDump, OnThread};
pub(super) use condition::{Scene, ThreadChoice};
use found::Found;
pub(super) use frames::{frame_matches, FramePattern};
pub(super) use said::SaidSpec;

/// A key of a `[[match]]` table and what the docs say of it.
#[derive(Debug)]
pub(super) struct KeyDoc {
    pub(super) key: &'static str,
    pub(super) doc: &'static str,
}

/// The keys of a table that are not conditions: they name it or say how
/// its conditions apply.
pub(super) const SETTINGS: &[KeyDoc] = &[
    KeyDoc {
        key: "thread",
        doc: "which thread the thread conditions apply to: `crashing` (the thread of a real crash), `blamed` (the crashing thread, or for a dump without a crash the exiting thread that is blocked), `any`, `named` (with `thread_name`). Default: `crashing` for crash rules, `blamed` for hang rules",
    },
    KeyDoc {
        key: "label",
        doc: "a few words on what this alternative recognises; every diagnosis names the table that matched (`alternative` in JSON, \"Matched by [[match]] N\" in text) by it, or by its conditions when it has none",
    },
    KeyDoc {
        key: "stack_search",
        doc: "`true`: when the chosen thread's walk is poor, return addresses found by searching its stack memory may stand in for frames (after the walked ones, `within` not applying to them) and for exit frames (a definite exit-time function found there makes the thread count as exiting, and a thread so found can be the blamed one). Each such piece of evidence says so and lowers the confidence (see [Stack search](../signatures.md#stack-search))",
    },
];

/// Declares the conditions, in the order they are checked: those on the
/// dump as a whole, then those on the chosen thread. Each line is the key
/// and the type (in its own file) that implements it.
macro_rules! conditions {
    (
        dump { $($dkey:ident: $dty:ty,)* }
        thread { $($tkey:ident: $tty:ty,)* }
    ) => {
        /// A `[[match]]` table as written.
        #[derive(Debug, Deserialize, Default)]
        pub(crate) struct MatchSpec {
            /// A few words on what this alternative recognises, named by
            /// every diagnosis it gives.
            label: Option<String>,
            thread: Option<ThreadChoice>,
            /// Whether return addresses found by searching a thread's stack
            /// memory (when its walk is poor) may stand in for frames and
            /// exit frames.
            #[serde(default)]
            stack_search: bool,
            $(#[serde(default)] $dkey: <$dty as Condition>::Spec,)*
            $(#[serde(default)] $tkey: <$tty as Condition>::Spec,)*
        }

        /// A `[[match]]` table compiled: each condition it sets.
        #[derive(Debug)]
        pub struct Conditions {
            /// The table's label, else its conditions in a few words.
            pub(in crate::signatures) label: String,
            pub(in crate::signatures) thread: ThreadChoice,
            /// Stack-search hits may stand in for frames and exit frames.
            pub(in crate::signatures) stack_search: bool,
            $($dkey: Option<<$dty as Condition>::Compiled>,)*
            $($tkey: Option<<$tty as Condition>::Compiled>,)*
        }

        /// The conditions on the dump as a whole, documented.
        pub(in crate::signatures) const ON_DUMP: &[KeyDoc] = &[
            $(KeyDoc { key: stringify!($dkey), doc: <$dty as Condition>::DOC },)*
        ];

        /// The conditions on the chosen thread, documented.
        pub(in crate::signatures) const ON_THREAD: &[KeyDoc] = &[
            $(KeyDoc { key: stringify!($tkey), doc: <$tty as Condition>::DOC },)*
        ];

        /// Each condition of a table, compiled under its key.
        fn compile_each(spec: &MatchSpec, cx: &mut Compiler<'_>, label: String) -> Conditions {
            Conditions {
                label,
                thread: cx.thread,
                stack_search: spec.stack_search,
                $($dkey: cx.compile::<$dty>(stringify!($dkey), &spec.$dkey),)*
                $($tkey: cx.compile::<$tty>(stringify!($tkey), &spec.$tkey),)*
            }
        }

        /// The words of each condition a table sets, with their rank.
        fn label_words(spec: &MatchSpec) -> Vec<(u8, String)> {
            let mut words = Vec::new();
            $(words.extend(
                <$dty as Condition>::label(&spec.$dkey).map(|w| (<$dty as Condition>::LABEL_RANK, w)),
            );)*
            $(words.extend(
                <$tty as Condition>::label(&spec.$tkey).map(|w| (<$tty as Condition>::LABEL_RANK, w)),
            );)*
            words
        }

        impl Conditions {
            /// How much a match of these conditions says: named functions
            /// count most. Used to put the most specific diagnosis first.
            pub(in crate::signatures) fn specificity(&self) -> u32 {
                0 $(+ self.$dkey.as_ref().map_or(0, <$dty as Condition>::weight))*
                  $(+ self.$tkey.as_ref().map_or(0, <$tty as Condition>::weight))*
            }

            /// Whether the conditions on the dump as a whole hold, adding
            /// their facts to `found`.
            pub(in crate::signatures) fn on_dump(&self, scene: &Scene<'_>, found: &mut Found) -> bool {
                $(if let Some(c) = &self.$dkey {
                    if !<$dty as OnDump>::holds(c, scene, found) {
                        return false;
                    }
                })*
                true
            }

            /// Whether the conditions on the chosen thread hold on
            /// `thread`, adding their facts to `found`.
            pub(in crate::signatures) fn on_thread(
                &self,
                scene: &Scene<'_>,
                thread: &Thread,
                found: &mut Found,
            ) -> bool {
                $(if let Some(c) = &self.$tkey {
                    if !<$tty as OnThread>::holds(c, scene, thread, found) {
                        return false;
                    }
                })*
                true
            }
        }
    };
}

conditions! {
    dump {
        crash: crash::Crash,
        deadlock: deadlock::Deadlock,
        captured: captured::Captured,
        exception: exception::Exception,
        abort: abort::Abort,
        access_in_unloaded_module: access_in_unloaded_module::AccessInUnloadedModule,
        access_in_module: access_in_module::AccessInModule,
        cpp_exception_type: cpp_exception_type::CppExceptionType,
        process_exiting: process_exiting::ProcessExiting,
        said: said::Said,
        modules_loaded: modules_loaded::ModulesLoaded,
        modules_unloaded: modules_unloaded::ModulesUnloaded,
        functions_absent: functions::FunctionsAbsent,
        functions_present: functions::FunctionsPresent,
    }
    thread {
        thread_name: thread_name::ThreadName,
        thread_exiting: thread_exiting::ThreadExiting,
        thread_blocked: thread_blocked::ThreadBlocked,
        waits_for: waits_for::WaitsFor,
        holder_blocked: holder_blocked::HolderBlocked,
        ip_in_unloaded_module: ip_in_unloaded_module::IpInUnloadedModule,
        frames: frames::Frames,
    }
}

impl MatchSpec {
    /// The thread the table's thread conditions apply to: as it says, else
    /// the crashing one for a crash rule and the blamed one for a hang.
    fn thread(&self, kind: Kind) -> ThreadChoice {
        self.thread.unwrap_or(match kind {
            Kind::Crash => ThreadChoice::Crashing,
            Kind::Hang => ThreadChoice::Blamed,
        })
    }
}

impl Conditions {
    /// The table's frame patterns, innermost first.
    pub(in crate::signatures) fn frames(&self) -> &[FramePattern] {
        self.frames.as_deref().unwrap_or_default()
    }
}

/// Compiles a `[[match]]` table of a rule of `kind`, found at `path`
/// (`match[0]`); with `full`, every check (a user's file, lint), else what
/// a run of the built-in rules needs. Every problem comes with its key.
pub(super) fn compile(
    spec: &MatchSpec,
    kind: Kind,
    path: &str,
    full: bool,
) -> Result<Conditions, Vec<(String, String)>> {
    let mut cx = Compiler::new(path, full, spec.thread(kind));
    let label = spec.label.clone().unwrap_or_else(|| label(spec));
    let conditions = compile_each(spec, &mut cx, label);
    let mut errors = cx.errors;
    if conditions.specificity() == 0 && conditions.crash.is_none() {
        errors.push((
            path.to_string(),
            "matches every dump: add a condition".to_string(),
        ));
    }
    if errors.is_empty() {
        Ok(conditions)
    } else {
        Err(errors)
    }
}

/// A `[[match]]` table without a `label`, in a few words: its first frame
/// patterns and the facts it requires.
fn label(spec: &MatchSpec) -> String {
    let mut words = label_words(spec);
    if words.is_empty() {
        return "no condition".to_string();
    }
    words.sort_by_key(|(rank, _)| *rank);
    let words: Vec<String> = words.into_iter().map(|(_, w)| w).collect();
    words.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(toml: &str) -> MatchSpec {
        toml::from_str(toml).unwrap()
    }

    /// A table without a label is named by its conditions, frames first,
    /// whatever their place in the list: diagnoses name tables so, and a
    /// new condition must not reorder the words of existing ones.
    #[test]
    fn default_labels_keep_their_word_order() {
        let spec = table(
            r#"
            said = ["terminate"]
            functions_present = ["Py_FinalizeEx"]
            modules_loaded = ["python3*.dll"]
            access_in_unloaded_module = true
            ip_in_unloaded_module = true
            captured = "hang-timeout"
            waits_for = "mutex"
            deadlock = true
            holder_blocked = false
            thread_blocked = true
            thread_exiting = true
            process_exiting = true
            abort = false
            crash = true
            exception = ["SIGABRT", "0xC0000409"]
            frames = [{ function = "exit" }, { module = "a.dll" }, { function = "b" }, { function = "c" }]
            "#,
        );
        assert_eq!(
            label(&spec),
            "frames exit < a.dll < b ...; exception SIGABRT/0xC0000409; crash; not abort; \
             process exiting; thread exiting; thread blocked; not holder blocked; deadlock; \
             waits for a mutex; captured at hang-timeout; instruction in an unloaded module; \
             access in an unloaded module; loaded python3*.dll; running Py_FinalizeEx; \
             the log says terminate"
        );
        assert_eq!(label(&table("")), "no condition");
    }

    /// Every key is documented, once, and a table of settings alone is
    /// refused as matching every dump.
    #[test]
    fn every_key_is_documented_once_and_a_table_needs_a_condition() {
        let keys: Vec<&str> = SETTINGS
            .iter()
            .chain(ON_DUMP)
            .chain(ON_THREAD)
            .map(|k| k.key)
            .collect();
        let unique: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(unique.len(), keys.len(), "{keys:?}");
        assert!(SETTINGS
            .iter()
            .chain(ON_DUMP)
            .chain(ON_THREAD)
            .all(|k| !k.doc.is_empty()));
        let settings_only = table("label = \"x\"\nstack_search = true\nthread = \"any\"");
        let errors = compile(&settings_only, Kind::Crash, "match[0]", true).unwrap_err();
        assert_eq!(
            errors,
            [(
                "match[0]".to_string(),
                "matches every dump: add a condition".to_string()
            )]
        );
        assert!(compile(&table("crash = false"), Kind::Hang, "match[0]", true).is_ok());
    }
}
