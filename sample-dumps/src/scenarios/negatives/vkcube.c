/* vkcube.exe: negative sample. A Vulkan application on a machine whose GPU
 * works: instance and device are created at start-up, then the render loop
 * submits command buffers. After a swapchain rebuild it submits a command
 * buffer it already freed, and the driver (amdvlk64.dll) faults reading it,
 * in the middle of rendering. A driver crash while rendering is not a device
 * probe and not an exit-time failure: no exit-time signature may answer it. */
#include "../common/dtcommon.h"

typedef int VkResult;
__declspec(dllimport) VkResult vkCreateInstance(const void *info, const void *alloc, void **out);
__declspec(dllimport) VkResult vkCreateDevice(void *physical_device, const void *info,
                                              const void *alloc, void **device);
__declspec(dllimport) VkResult vkQueueSubmit(void *queue, unsigned count, const void *submits,
                                             void *fence);

/* What the driver's command buffer handle points at (see amdvlk64.cpp). */
struct CmdStreamChunk {
    unsigned long long gpuVa;
    unsigned dwords;
};
struct CmdBuffer {
    struct CmdStreamChunk *chunks;
    unsigned chunkCount;
};
struct SubmitInfo {
    unsigned commandBufferCount;
    struct CmdBuffer *const *pCommandBuffers;
};

static void *g_device;
static struct CmdBuffer *g_cmd[2];

NOINLINE static struct CmdBuffer *record_command_buffer(int frame)
{
    struct CmdBuffer *cmd = dt_page_alloc(4096);
    cmd->chunks = (struct CmdStreamChunk *)((char *)cmd + 64);
    cmd->chunks[0].gpuVa = 0x100000ull * (unsigned)(frame + 1);
    cmd->chunks[0].dwords = 96;
    cmd->chunkCount = 1;
    return cmd;
}

NOINLINE static void recreate_swapchain(void)
{
    /* The old per-image command buffers are freed; the slot keeps its stale
     * pointer (the bug). */
    dt_page_free(g_cmd[1]);
}

NOINLINE static void draw_frame(int frame)
{
    int image = frame % 2;
    struct SubmitInfo submit = {1, &g_cmd[image]};
    vkQueueSubmit(g_device, 1, &submit, NULL);
}

NOINLINE static void render_loop(void)
{
    for (int frame = 0; frame < 600; frame++) {
        if (frame == 3) recreate_swapchain();
        draw_frame(frame);
        Sleep(1);
    }
}

NOINLINE static int init_vulkan(void)
{
    void *instance = NULL;
    if (vkCreateInstance(NULL, NULL, &instance) != 0) return 0;
    if (vkCreateDevice(NULL, NULL, NULL, &g_device) != 0) return 0;
    g_cmd[0] = record_command_buffer(0);
    g_cmd[1] = record_command_buffer(1);
    return 1;
}

int wmain(void)
{
    crashcap_install();
    dt_name_thread(GetCurrentThread(), L"vkcube-main");
    if (!init_vulkan()) return 2;
    render_loop();
    return 0;
}
