// Context management: creation and destruction, the per-thread context stack, per-context settings, and green
// contexts (ordinary contexts restricted to a share of the device's SMs) with the device-resource entry points.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/log.h"
#include "core/stream.h"
#include "core/stream_lookup.h"

#include <algorithm>

namespace cuemu::impl {
namespace {

CUresult createContext(CUcontext* pctx, unsigned flags, CUdevice dev, unsigned apiVersion,
                       const CUexecAffinityParam* affinity, int affinityCount, bool reportsMapHost = true) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  if (!validContextFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  if (affinityCount < 0 || (affinityCount > 0 && !affinity)) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < affinityCount; ++i) {
    if (affinity[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
    // A share of the SMs needs MPS on NVIDIA's driver (cuDeviceGetExecAffinitySupport answers 0).
    return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
  }
  auto context = std::make_shared<Context>(**device, flags, /*primary=*/false, apiVersion);
  context->setReportsMapHost(reportsMapHost);
  context->registerHandle();
  pushCurrentContext(context);
  *pctx = context->apiHandle();
  return CUDA_SUCCESS;
}

// cuCtxDestroy's work for a context that is not primary: unregister (so a second destroy fails), pop it
// from this thread, drain its work, free everything it owns.
CUresult destroyContext(const std::shared_ptr<Context>& found) {
  auto context = handleTable<Context>().erase(found->handle());
  if (!context) return CUDA_ERROR_INVALID_CONTEXT;  // another thread destroyed it meanwhile
  context->setAlive(false);
  forgetContextOnThisThread(*context);
  context->synchronize();
  context->teardown();
  return CUDA_SUCCESS;
}

template <typename Fn> CUresult withCurrent(Fn&& fn) {
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  return fn(**context);
}

bool validResourceType(CUdevResourceType type) { return type == CU_DEV_RESOURCE_TYPE_SM; }

// The SMs a device or context has, described as a green-context resource. Partitions on Hopper come in
// units of 8 SMs with pairs co-scheduled (TPCs).
void describeSms(CUdevResource& resource, int smCount) {
  resource = CUdevResource{};
  resource.type = CU_DEV_RESOURCE_TYPE_SM;
  resource.sm.smCount = static_cast<unsigned>(smCount);
  resource.sm.minSmPartitionSize = 8;
  resource.sm.smCoscheduledAlignment = 2;
}

// A green context: an ordinary context (made with a share of the SMs) behind its own handle kind.
struct GreenContext {
  static constexpr HandleKind kKind = HandleKind::GreenContext;
  std::shared_ptr<Context> context;
};
// What cuDevResourceGenerateDesc combined: the SMs a green context will get.
struct ResourceDesc {
  static constexpr HandleKind kKind = HandleKind::DevResourceDesc;
  unsigned smCount = 0;
};
Expected<std::shared_ptr<Context>> findGreenContext(CUgreenCtx handle) {
  auto green = lookup<GreenContext>(handle);
  if (!green) return green.takeError();
  if (!(*green)->context->isAlive()) return makeError(CUDA_ERROR_CONTEXT_IS_DESTROYED, "its context was destroyed");
  return (*green)->context;
}

// How cuDevSmResourceSplitByCount divides SMs: groups of at least `minCount` (and at least one partition),
// rounded up to whole partitions of the device (8 SMs on Hopper), or to co-scheduled pairs when asked to
// ignore partitioning.
struct SmGroups {
  unsigned count;
  unsigned size;
};
Expected<SmGroups> splitSms(unsigned available, unsigned minCount, unsigned useFlags) {
  constexpr unsigned kPartition = 8, kCoscheduled = 2;
  unsigned unit = (useFlags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) ? 1 : kCoscheduled;
  unsigned size = std::max(minCount, kPartition);
  size = (size + unit - 1) / unit * unit;
  if (size > available) return makeError(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "too few SMs");
  return SmGroups{available / size, size};
}

}  // namespace

// --- creation and destruction ---

CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return createContext(pctx, flags, dev, kLegacyContextApiVersion, nullptr, 0);
}

CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return createContext(pctx, flags, dev, kContextApiVersion, nullptr, 0);
}

CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                        CUdevice dev) {
  return createContext(pctx, flags, dev, kContextApiVersion, paramsArray, numParams);
}

CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev) {
  if (!ctxCreateParams) return createContext(pctx, flags, dev, kContextApiVersion, nullptr, 0, false);
  if (ctxCreateParams->execAffinityParams && ctxCreateParams->cigParams) return CUDA_ERROR_INVALID_VALUE;
  if (ctxCreateParams->cigParams) {
    // CUDA in Graphics needs a D3D12 or Vulkan client (CU_DEVICE_ATTRIBUTE_*_CIG_SUPPORTED = 0).
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    auto device = requireDevice(dev);
    if (!device) return device.error().code;
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return createContext(pctx, flags, dev, kContextApiVersion, ctxCreateParams->execAffinityParams,
                       ctxCreateParams->execAffinityParams ? ctxCreateParams->numExecAffinityParams : 0, false);
}

CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(context, Context, ctx, CUDA_ERROR_INVALID_CONTEXT);
  if (context->isPrimary()) return CUDA_ERROR_INVALID_CONTEXT;  // released with cuDevicePrimaryCtxRelease
  return destroyContext(context);
}

CUresult cuCtxDestroy(CUcontext ctx) { return impl::cuCtxDestroy_v2(ctx); }

// Legacy usage counting: cuCtxAttach adds a user to the current context, cuCtxDetach removes one and
// destroys the context with its last user.
CUresult cuCtxAttach(CUcontext* pctx, unsigned int flags) {
  if (!pctx || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    context.attach();
    *pctx = context.apiHandle();
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxDetach(CUcontext ctx) {
  CUEMU_LOOKUP(context, Context, ctx, CUDA_ERROR_INVALID_CONTEXT);
  if (!context->isAlive() || context != currentContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (context->detach() > 0) return CUDA_SUCCESS;
  if (context->isPrimary()) return CUDA_SUCCESS;  // its lifetime belongs to retain/release
  return destroyContext(context);
}

// --- the context stack ---

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;  // measured on driver 580
  CUEMU_LOOKUP(context, Context, ctx, CUDA_ERROR_INVALID_CONTEXT);
  pushCurrentContext(std::move(context));
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx) { return impl::cuCtxPushCurrent_v2(ctx); }

CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  auto context = popCurrentContext();
  if (!context) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = context->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext* pctx) { return impl::cuCtxPopCurrent_v2(pctx); }

// Binding an inactive primary context is allowed: the CUDA runtime binds the primary context before it
// retains it.
CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!ctx) {
    setCurrentContext(nullptr);
    return CUDA_SUCCESS;
  }
  CUEMU_LOOKUP(context, Context, ctx, CUDA_ERROR_INVALID_CONTEXT);
  setCurrentContext(std::move(context));
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  auto context = currentContext();
  *pctx = context ? context->apiHandle() : nullptr;
  return CUDA_SUCCESS;
}

// --- queries ---

CUresult cuCtxGetDevice(CUdevice* device) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    *device = context.device().handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  auto context = resolveContext(ctx);
  if (!context) return context.error().code;
  *device = (*context)->device().handle();
  return CUDA_SUCCESS;
}

// Mapped pinned memory is always available, so NVIDIA's driver reports CU_CTX_MAP_HOST on every context.
CUresult cuCtxGetFlags(unsigned int* flags) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    *flags = context.flags() | (context.reportsMapHost() ? unsigned{CU_CTX_MAP_HOST} : 0u);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetFlags(unsigned int flags) {
  if (!validContextFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    context.setFlags(flags);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
  auto context = resolveContext(ctx);
  if (!context) return context.error().code;
  *ctxId = (*context)->id();
  return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  auto context = resolveContext(ctx);
  if (!context) return context.error().code;
  *version = (*context)->apiVersion();
  return CUDA_SUCCESS;
}

// Execution affinity needs MPS on NVIDIA's driver (cuDeviceGetExecAffinitySupport answers 0).
CUresult cuCtxGetExecAffinity(CUexecAffinityParam* pExecAffinity, CUexecAffinityType type) {
  if (!pExecAffinity || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 answers with the context's SM count even on devices that report no affinity support.
  return withCurrent([&](Context& context) {
    *pExecAffinity = {};
    pExecAffinity->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    pExecAffinity->param.smCount.val = static_cast<unsigned>(context.smCount());
    return CUDA_SUCCESS;
  });
}

// --- settings ---

CUresult cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) { return context.limit(limit, *pvalue); });
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  return withCurrent([&](Context& context) { return context.setLimit(limit, value); });
}

CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    *pconfig = context.cacheConfig();
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  if (static_cast<unsigned>(config) > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    context.setCacheConfig(config);
    return CUDA_SUCCESS;
  });
}

// Hopper has fixed 4-byte shared memory banks: a requested configuration is accepted and has no effect.
CUresult cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) {
  if (!pConfig) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context&) {
    *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetSharedMemConfig(CUsharedconfig config) {
  if (static_cast<unsigned>(config) > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    context.setSharedMemConfig(config);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return withCurrent([&](Context&) {
    if (leastPriority) *leastPriority = kLeastStreamPriority;
    if (greatestPriority) *greatestPriority = kGreatestStreamPriority;
    return CUDA_SUCCESS;
  });
}

// Persisting L2 lines only change timing, which cuemu does not model.
CUresult cuCtxResetPersistingL2Cache() {
  return withCurrent([&](Context&) { return CUDA_SUCCESS; });
}

// --- synchronisation and events ---

CUresult cuCtxSynchronize() {
  return withCurrent([](Context& context) { return context.synchronize(); });
}

CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  auto context = resolveContext(ctx);
  if (!context) return context.error().code;
  return (*context)->synchronize();
}

// A context-wide record or wait goes through the legacy default stream, which orders itself with every
// blocking stream of the context. The event must belong to the context.
static Expected<std::shared_ptr<Event>> contextEvent(Context& context, CUevent hEvent) {
  auto event = lookup<Event>(hEvent);
  if (event && &(*event)->context() != &context)
    return makeError(CUDA_ERROR_INVALID_HANDLE, "an event of another context");
  return event;
}

CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent) {
  auto context = resolveContext(hCtx);
  if (!context) return context.error().code;
  auto event = contextEvent(**context, hEvent);
  if (!event) return event.error().code;
  auto legacy = (*context)->streams().resolve(CU_STREAM_LEGACY);
  if (!legacy) return legacy.error().code;
  (*event)->record(**legacy);
  return CUDA_SUCCESS;
}

CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent) {
  auto context = resolveContext(hCtx);
  if (!context) return context.error().code;
  auto event = contextEvent(**context, hEvent);
  if (!event) return event.error().code;
  StreamPosition position;
  if (!(*event)->position(position)) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  auto legacy = (*context)->streams().resolve(CU_STREAM_LEGACY);
  if (!legacy) return legacy.error().code;
  (*context)->streams().submit(**legacy, nullptr, {position});
  return CUDA_SUCCESS;
}

// --- peer access ---

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return withCurrent([&](Context& context) {
    CUEMU_LOOKUP(peer, Context, peerContext, CUDA_ERROR_INVALID_CONTEXT);
    if (!peer->isAlive() || peer.get() == &context) return CUDA_ERROR_INVALID_CONTEXT;
    int canAccess = 0;
    impl::cuDeviceCanAccessPeer(&canAccess, context.device().handle(), peer->device().handle());
    if (!canAccess) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    return context.enablePeerAccess(*peer);
  });
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  return withCurrent([&](Context& context) {
    CUEMU_LOOKUP(peer, Context, peerContext, CUDA_ERROR_INVALID_CONTEXT);
    if (!peer->isAlive()) return CUDA_ERROR_INVALID_CONTEXT;
    return context.disablePeerAccess(*peer);
  });
}

// --- green contexts and device resources ---

CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource* resource, CUdevResourceType type) {
  auto found = requireDevice(device);
  if (!found) return found.error().code;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (!validResourceType(type)) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  describeSms(*resource, (*found)->profile().smCount);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource, CUdevResourceType type) {
  auto context = resolveContext(hCtx);
  if (!context) return context.error().code;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (!validResourceType(type)) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  describeSms(*resource, (*context)->smCount());
  return CUDA_SUCCESS;
}

CUresult cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups, const CUdevResource* input,
                                     CUdevResource* remaining, unsigned int useFlags, unsigned int minCount) {
  if (!nbGroups || !input || input->type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  if (useFlags &
      ~unsigned(CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING | CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE))
    return CUDA_ERROR_INVALID_VALUE;
  if (result && *nbGroups == 0) return CUDA_ERROR_INVALID_VALUE;
  auto groups = splitSms(input->sm.smCount, minCount, useFlags);
  if (!groups) return groups.error().code;
  unsigned made = result ? std::min(*nbGroups, groups->count) : groups->count;
  for (unsigned i = 0; result && i < made; ++i) describeSms(result[i], static_cast<int>(groups->size));
  if (remaining) describeSms(*remaining, static_cast<int>(input->sm.smCount - made * groups->size));
  *nbGroups = made;
  return CUDA_SUCCESS;
}

CUresult cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources, unsigned int nbResources) {
  if (!phDesc || !resources || nbResources == 0) return CUDA_ERROR_INVALID_VALUE;
  unsigned sms = 0;
  for (unsigned i = 0; i < nbResources; ++i) {
    if (resources[i].type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    if (resources[i].sm.smCount == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    sms += resources[i].sm.smCount;
  }
  auto desc = std::make_shared<ResourceDesc>();
  desc->smCount = sms;
  *phDesc = toApiHandle<CUdevResourceDesc>(handleTable<ResourceDesc>().insert(std::move(desc)));
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags) {
  if (!phCtx || !desc) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  if (flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(resources, ResourceDesc, desc);
  if (resources->smCount > static_cast<unsigned>((*device)->profile().smCount))
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  // A green context is an ordinary context restricted to a share of the SMs; it is not made current.
  auto context = std::make_shared<Context>(**device, 0, /*primary=*/false, kContextApiVersion);
  context->setSmCount(static_cast<int>(resources->smCount));
  context->registerHandle();
  auto green = std::make_shared<GreenContext>();
  green->context = context;
  uint64_t handle = handleTable<GreenContext>().insert(std::move(green));
  context->setGreenHandle(handle);
  *phCtx = toApiHandle<CUgreenCtx>(handle);
  return CUDA_SUCCESS;
}

// The handle stays known after destruction: using it again answers CUDA_ERROR_CONTEXT_IS_DESTROYED (driver 580).
CUresult cuGreenCtxDestroy(CUgreenCtx hCtx) {
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  return destroyContext(*green);
}

CUresult cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) {
  if (!pContext) return CUDA_ERROR_INVALID_VALUE;
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  *pContext = (*green)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource, CUdevResourceType type) {
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  if (!validResourceType(type)) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  describeSms(*resource, (*green)->smCount());
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxGetId(CUgreenCtx hCtx, unsigned long long* greenCtxId) {
  if (!greenCtxId) return CUDA_ERROR_INVALID_VALUE;
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  *greenCtxId = (*green)->id();
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) {
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  return impl::cuCtxRecordEvent((*green)->apiHandle(), hEvent);
}

CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) {
  auto green = findGreenContext(hCtx);
  if (!green) return green.error().code;
  return impl::cuCtxWaitEvent((*green)->apiHandle(), hEvent);
}

CUresult cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx, unsigned int flags, int priority) {
  if (!phStream) return CUDA_ERROR_INVALID_VALUE;
  auto green = findGreenContext(greenCtx);
  if (!green) return green.error().code;
  // Green-context streams never synchronise with a NULL stream: the flag is required.
  if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  priority = std::min(kLeastStreamPriority, std::max(kGreatestStreamPriority, priority));
  *phStream = (*green)->streams().create(flags, priority)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx* phCtx) {
  if (!phCtx) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(hStream);
  if (!stream) return stream.error().code;
  *phCtx = toApiHandle<CUgreenCtx>((*stream)->context().greenHandle());
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
