// PASS: sequential-tiles
// Tiles of stages that run one after the other share memory (sequential_tiles.py), as
// the two loops of the causal attention's stages do (the input is cut from the shape of
// tests/test_block_ownership.py's STAGES). Three stages: a and b, each overwritten
// first, in one loop body; c read before it is written (it carries a value across
// iterations) and e after it in the second; d in the third. a and b share inside the
// first body; c and d, whose uses all come after a's, take that memory too; e, live
// while c is (c is read first in each iteration), keeps a tile of its own.

// CHECK-LABEL: func.func @k
// CHECK:       %[[SHARED:.*]] = memref.alloc() : memref<256xf32>
// CHECK-NEXT:  %[[OWN:.*]] = memref.alloc() : memref<256xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for
// CHECK-NEXT:    memref.copy %{{.*}}, %[[SHARED]]
// CHECK-NEXT:    memref.load %[[SHARED]]
// CHECK:         memref.copy %{{.*}}, %[[SHARED]]
// CHECK-NEXT:    memref.load %[[SHARED]]
// CHECK:       scf.for
// CHECK-NEXT:    memref.load %[[SHARED]]
// CHECK:         memref.copy %{{.*}}, %[[SHARED]]
// CHECK-NEXT:    memref.copy %{{.*}}, %[[OWN]]
// CHECK-NEXT:    memref.load %[[OWN]]
// CHECK:       scf.for
// CHECK-NEXT:    memref.copy %{{.*}}, %[[SHARED]]
// CHECK-NEXT:    memref.load %[[SHARED]]
func.func @k(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %out_view = memref.reinterpret_cast %out to offset: [0], sizes: [256], strides: [1] : memref<?xf32> to memref<256xf32, strided<[1]>>
  %a = memref.alloc() : memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  %d = memref.alloc() : memref<256xf32>
  %e = memref.alloc() : memref<256xf32>
  scf.for %t = %c0 to %n step %c1 {
    memref.copy %out_view, %a : memref<256xf32, strided<[1]>> to memref<256xf32>
    %x = memref.load %a[%t] : memref<256xf32>
    memref.store %x, %out[%t] : memref<?xf32>
    memref.copy %out_view, %b : memref<256xf32, strided<[1]>> to memref<256xf32>
    %y = memref.load %b[%t] : memref<256xf32>
    memref.store %y, %out[%t] : memref<?xf32>
  }
  scf.for %t = %c0 to %n step %c1 {
    %x = memref.load %c[%t] : memref<256xf32>
    memref.store %x, %out[%t] : memref<?xf32>
    memref.copy %out_view, %c : memref<256xf32, strided<[1]>> to memref<256xf32>
    memref.copy %out_view, %e : memref<256xf32, strided<[1]>> to memref<256xf32>
    %y = memref.load %e[%t] : memref<256xf32>
    memref.store %y, %out[%t] : memref<?xf32>
  }
  scf.for %t = %c0 to %n step %c1 {
    memref.copy %out_view, %d : memref<256xf32, strided<[1]>> to memref<256xf32>
    %x = memref.load %d[%t] : memref<256xf32>
    memref.store %x, %out[%t] : memref<?xf32>
  }
  return
}
