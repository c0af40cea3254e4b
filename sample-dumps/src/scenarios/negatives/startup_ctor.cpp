// plugin_registry.exe: negative sample. A global object's constructor runs
// before main (mingw-w64: __main -> __do_global_ctors, as MSVC's CRT runs
// them from _initterm in its start-up) and dereferences a configuration that
// was never loaded. A crash in a static constructor is a start-up crash, not
// an exit-time one, though the same CRT machinery runs the destructors at exit.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"

struct PluginConfig {
    const wchar_t *search_path;
    int max_plugins;
};

static PluginConfig *g_config; // loaded by main() in the intended order: never here

class PluginRegistry {
  public:
    NOINLINE PluginRegistry();
    NOINLINE void scan(const PluginConfig *config);
    int m_slots = 0;
};

NOINLINE void PluginRegistry::scan(const PluginConfig *config)
{
    m_slots = config->max_plugins; // the fault: config is null
}

NOINLINE PluginRegistry::PluginRegistry() { scan(g_config); }

// The crash reporter must be in place before the constructors that can crash.
__attribute__((constructor(101))) static void install_crash_reporter() { crashcap_install(); }

static PluginRegistry g_registry;

int wmain()
{
    static PluginConfig config = {L"plugins", 8};
    g_config = &config;
    return g_registry.m_slots;
}
