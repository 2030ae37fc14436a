// PASS: spirv-drop-prefetches
// `memref.prefetch` (a hint, memref_stage/next_block_prefetch.py) goes: upstream has no
// SPIR-V pattern for it. The view only it read stays for the clean-up to erase; the
// loads and stores stay.

// CHECK-LABEL: func.func @prefetched
// CHECK:       memref.reinterpret_cast
// CHECK-NEXT:  arith.constant 0 : index
// CHECK-NEXT:  memref.load
// CHECK-NEXT:  memref.store
// CHECK-NEXT:  return
func.func @prefetched(%x: memref<?xf32>, %i: index) {
  %next = memref.reinterpret_cast %x to offset: [%i], sizes: [16], strides: [1]
      : memref<?xf32> to memref<16xf32, strided<[1], offset: ?>>
  %c0 = arith.constant 0 : index
  memref.prefetch %next[%c0], read, locality<3>, data : memref<16xf32, strided<[1], offset: ?>>
  %v = memref.load %x[%i] : memref<?xf32>
  memref.store %v, %x[%c0] : memref<?xf32>
  return
}
