// Handlers of the texture and surface instructions (texture.cpp). op->aux indexes Program::texSites.
#pragma once

#include "exec/engine.h"

namespace ptx::exec::tex {

const Op* fetch(Warp& w, const Op* op);    // tex, tld4
const Op* surface(Warp& w, const Op* op);  // suld.b (imm 0), sust.b (imm 1)

}  // namespace ptx::exec::tex
