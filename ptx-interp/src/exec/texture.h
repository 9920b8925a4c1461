// Handlers of the texture and surface instructions (texture.cpp).
#pragma once

#include "exec/engine.h"

namespace ptx::exec::tex {

// The operands of fetch() and surface(): the instruction's registers and shape are its Program::texSites entry.
struct TextureOperands {
  uint32_t site = 0;   // Program::texSites
  bool store = false;  // surface(): sust.b (suld.b otherwise)

  static TextureOperands of(const Op& op) { return {op.aux, op.imm != 0}; }
  void into(Op& op) const {
    op.aux = site;
    op.imm = store ? 1 : 0;
  }
};

const Op* fetch(Warp& w, const Op* op);    // tex, tld4
const Op* surface(Warp& w, const Op* op);  // suld.b, sust.b

}  // namespace ptx::exec::tex
