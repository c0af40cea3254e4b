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
