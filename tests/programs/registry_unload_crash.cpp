/* A static registry keeps a hook into a plugin it unloads; its destructor
 * calls the hook at exit: a crash in unloaded code whose caller is a C++
 * static destructor, the same mechanism as unload_crash.c under other
 * names. */
#include <dlfcn.h>
#include <stdio.h>

namespace {

class PluginRegistry {
public:
    ~PluginRegistry()
    {
        fprintf(stderr, "registry_unload_crash: releasing the unloaded plugin\n");
        fflush(stderr);
        if (release_)
            release_();
    }
    void keep(void (*release)()) { release_ = release; }

private:
    void (*release_)() = nullptr;
};

PluginRegistry registry;

} // namespace

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "./libplugin.so";
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "registry_unload_crash: %s\n", dlerror());
        return 1;
    }
    registry.keep(reinterpret_cast<void (*)()>(dlsym(plugin, "plugin_release")));
    dlclose(plugin);
    return 0;
}
