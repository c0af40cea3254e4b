/* vulkan-1.dll stand-in: the Khronos Vulkan loader. vkCreateInstance scans
 * for installable client drivers (ICDs), loads each and calls its
 * vkCreateInstance through vk_icdGetInstanceProcAddr (terminator_CreateInstance). */
#include "../common/dtcommon.h"

typedef int VkResult;
typedef struct VkInstance_T *VkInstance;
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vk_icdGetInstanceProcAddr)(VkInstance, const char *);
typedef VkResult (*PFN_vkCreateInstance)(const void *, const void *, VkInstance *);

struct loader_icd_term {
    HMODULE handle;
    PFN_vk_icdGetInstanceProcAddr GetInstanceProcAddr;
    const wchar_t *path;
};

static struct loader_icd_term icds[1];
static int icd_count;

NOINLINE static void loader_icd_scan(void)
{
    /* HKLM\SOFTWARE\Khronos\Vulkan\Drivers would list the driver manifest(s). */
    HMODULE h = LoadLibraryW(L"amdvlk64.dll");
    if (!h) return;
    icds[0].handle = h;
    icds[0].GetInstanceProcAddr =
        (PFN_vk_icdGetInstanceProcAddr)GetProcAddress(h, "vk_icdGetInstanceProcAddr");
    icds[0].path = L"amdvlk64.dll";
    icd_count = 1;
}

NOINLINE static VkResult terminator_CreateInstance(const void *info, const void *alloc,
                                                   VkInstance *out)
{
    for (int i = 0; i < icd_count; i++) {
        PFN_vkCreateInstance create =
            (PFN_vkCreateInstance)icds[i].GetInstanceProcAddr(NULL, "vkCreateInstance");
        VkResult r = create(info, alloc, out);
        if (r == 0) return 0;
    }
    return -9; /* VK_ERROR_INCOMPATIBLE_DRIVER */
}

__declspec(dllexport) VkResult vkCreateInstance(const void *info, const void *alloc, VkInstance *out)
{
    loader_icd_scan();
    return terminator_CreateInstance(info, alloc, out);
}

__declspec(dllexport) VkResult vkEnumeratePhysicalDevices(VkInstance instance, unsigned *count,
                                                          void **devices)
{
    (void)instance;
    (void)devices;
    *count = 0;
    return 0;
}

typedef VkResult (*PFN_vkQueueSubmit)(void *queue, unsigned count, const void *submits, void *fence);
static PFN_vkQueueSubmit icd_queue_submit;

/* Device creation, reduced to what the loader keeps: the ICD's dispatch
 * entries for the device's queues. */
__declspec(dllexport) VkResult vkCreateDevice(void *physical_device, const void *info,
                                              const void *alloc, void **device)
{
    (void)physical_device;
    (void)info;
    (void)alloc;
    if (icd_count == 0) return -3; /* VK_ERROR_INITIALIZATION_FAILED */
    icd_queue_submit = (PFN_vkQueueSubmit)icds[0].GetInstanceProcAddr(NULL, "vkQueueSubmit");
    *device = &icds[0];
    return icd_queue_submit ? 0 : -3;
}

/* The loader's trampoline: one jump through the queue's dispatch table into
 * the ICD. */
__declspec(dllexport) VkResult vkQueueSubmit(void *queue, unsigned count, const void *submits,
                                             void *fence)
{
    return icd_queue_submit(queue, count, submits, fence);
}

typedef void (*PFN_vkDestroyDevice)(void *device, const void *allocator);

/* The loader's trampoline for device destruction: straight into the ICD. */
__declspec(dllexport) void vkDestroyDevice(void *device, const void *allocator)
{
    PFN_vkDestroyDevice destroy =
        (PFN_vkDestroyDevice)icds[0].GetInstanceProcAddr(NULL, "vkDestroyDevice");
    if (destroy) destroy(device, allocator);
}
