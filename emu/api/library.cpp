// The shared library's own translation unit: everything else comes from the cuemu_core archive, linked whole
// so that every exported entry point is present.
