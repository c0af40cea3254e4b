/* The slice of ONNX Runtime's C API (OrtApi) the stand-in programs use. The
 * real OrtApi is a large table of function pointers reached through
 * OrtGetApiBase()->GetApi(ORT_API_VERSION); the order here is our own. */
#ifndef ORT_API_STANDIN_H
#define ORT_API_STANDIN_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef void *OrtStatusPtr;

typedef struct OrtApi {
    OrtStatusPtr (*CreateEnv)(int log_severity_level, const char *logid, OrtEnv **out);
    void (*ReleaseEnv)(OrtEnv *env);
    OrtStatusPtr (*CreateSession)(OrtEnv *env, const wchar_t *model_path, int use_webgpu,
                                  OrtSession **out);
    void (*ReleaseSession)(OrtSession *session);
    OrtStatusPtr (*Run)(OrtSession *session);
    OrtStatusPtr (*SessionGetInputTypeInfo)(const OrtSession *session, size_t index,
                                            OrtTypeInfo **type_info);
    void (*ReleaseTypeInfo)(OrtTypeInfo *type_info);
} OrtApi;

typedef struct OrtApiBase {
    const OrtApi *(*GetApi)(unsigned version);
    const char *(*GetVersionString)(void);
} OrtApiBase;

#define ORT_API_VERSION 22
typedef const OrtApiBase *(*PFN_OrtGetApiBase)(void);
#ifdef __cplusplus
}
#endif
#endif
