// Stand-in for Microsoft.Windows.AI.MachineLearning.dll (Windows ML, Windows
// App SDK), the native library behind the `windowsml` Python package. Its flat
// C API manages an execution-provider catalog: WinMLEpCatalogCreate,
// WinMLEpCatalogFindAllProviders, WinMLEpCatalogRelease.
//
// The defect modelled: on the affected QNN NPU driver set-ups, provider
// information handed out by the driver during enumeration is released by the
// driver when enumeration ends, while the catalog keeps pointing at it. The
// catalog's release then dereferences driver memory that is gone:
// STATUS_ACCESS_VIOLATION inside WinMLEpCatalogRelease.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"

#define WINMLAPI extern "C" __declspec(dllexport)

namespace winml {

struct QnnProviderOps {
    void (*close)(void *ctx);
    void *ctx;
};

// Provider information owned by the QNN driver (its own pages).
struct QnnProviderInfo {
    QnnProviderOps ops;
    wchar_t library_path[MAX_PATH];
};

static void qnn_close_noop(void *) {}

namespace qnn {
NOINLINE QnnProviderInfo *DriverQueryProvider()
{
    QnnProviderInfo *info = (QnnProviderInfo *)dt_page_alloc(sizeof(QnnProviderInfo));
    info->ops.close = qnn_close_noop;
    lstrcpyW(info->library_path, L"C:\\Windows\\System32\\DriverStore\\FileRepository\\qcnspmcdm.inf\\QnnHtp.dll");
    return info;
}
NOINLINE void DriverEndEnumeration(QnnProviderInfo *info) { dt_page_free(info); }
} // namespace qnn

class ExecutionProviderEntry {
  public:
    NOINLINE void Close() { m_driverInfo->ops.close(m_driverInfo->ops.ctx); }
    const wchar_t *m_name = L"QNNExecutionProvider";
    QnnProviderInfo *m_driverInfo = nullptr;
};

class EpCatalog {
  public:
    NOINLINE int FindAllProviders();
    NOINLINE void Release();
    NOINLINE ~EpCatalog();
    ExecutionProviderEntry m_entries[2];
    int m_count = 0;
    LONG m_refs = 1;
};

NOINLINE int EpCatalog::FindAllProviders()
{
    // Ask the NPU driver, copy the library path out, end the enumeration.
    QnnProviderInfo *info = qnn::DriverQueryProvider();
    m_entries[0].m_driverInfo = info; // kept: dangling once enumeration ends
    m_count = 1;
    qnn::DriverEndEnumeration(info);
    return m_count;
}

NOINLINE EpCatalog::~EpCatalog()
{
    for (int i = 0; i < m_count; i++) m_entries[i].Close();
}

NOINLINE void EpCatalog::Release()
{
    if (InterlockedDecrement(&m_refs) == 0) delete this;
}

} // namespace winml

typedef winml::EpCatalog *WinMLEpCatalogHandle;

WINMLAPI HRESULT WinMLEpCatalogCreate(WinMLEpCatalogHandle *catalog)
{
    *catalog = new winml::EpCatalog();
    return S_OK;
}

WINMLAPI HRESULT WinMLEpCatalogFindAllProviders(WinMLEpCatalogHandle catalog)
{
    catalog->FindAllProviders();
    return S_OK;
}

WINMLAPI void WinMLEpCatalogRelease(WinMLEpCatalogHandle catalog)
{
    if (catalog) catalog->Release();
}
