/* ggml-vulkan.dll stand-in: ggml's Vulkan backend, device enumeration part. */
#include "../common/dtcommon.h"

typedef int VkResult;
typedef struct VkInstance_T *VkInstance;
typedef struct {
    int sType;
    const void *pNext;
    unsigned flags;
    const void *pApplicationInfo;
    unsigned enabledLayerCount;
    const char *const *ppEnabledLayerNames;
    unsigned enabledExtensionCount;
    const char *const *ppEnabledExtensionNames;
} VkInstanceCreateInfo;

__declspec(dllimport) VkResult vkCreateInstance(const VkInstanceCreateInfo *info, const void *alloc,
                                                VkInstance *instance);
__declspec(dllimport) VkResult vkEnumeratePhysicalDevices(VkInstance instance, unsigned *count,
                                                          void **devices);
__declspec(dllimport) VkResult vkCreateDevice(void *physical_device, const void *info,
                                              const void *alloc, void **device);
__declspec(dllimport) void vkDestroyDevice(void *device, const void *allocator);
#include <stdlib.h>

static VkInstance vk_instance;

NOINLINE static int ggml_vk_instance_init(void)
{
    VkInstanceCreateInfo info = {1 /* VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO */};
    return vkCreateInstance(&info, NULL, &vk_instance);
}

__declspec(dllexport) int ggml_backend_vk_get_device_count(void)
{
    if (ggml_vk_instance_init() != 0) return 0;
    unsigned count = 0;
    vkEnumeratePhysicalDevices(vk_instance, &count, NULL);
    return (int)count;
}

/* The backend's device, kept for the process in a static (ggml's vk_instance
 * and its device list) and destroyed by the cleanup registered with atexit:
 * in a DLL that is this DLL's onexit table, run by its DLL_PROCESS_DETACH,
 * after the loader and the driver, loaded later, were detached. */
static void *vk_device;

NOINLINE static void ggml_vk_cleanup(void)
{
    if (vk_device) vkDestroyDevice(vk_device, NULL);
    vk_device = NULL;
}

__declspec(dllexport) int ggml_backend_vk_init(void)
{
    if (ggml_vk_instance_init() != 0) return 0;
    if (vkCreateDevice(NULL, NULL, NULL, &vk_device) != 0) return 0;
    atexit(ggml_vk_cleanup);
    return 1;
}
