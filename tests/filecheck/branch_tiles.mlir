// PASS: branch-tiles
// Tiles of the exclusive branches of an scf.if share memory (branch_tiles.py): the two
// versions of a kernel (stream_forwarding.py's `if (full tiles)`, the matmul's block
// path and gather path) never run together. The then-branch's 4x4 tile moves in front
// of the scf.if and serves the else-branch's first 4x4 tile as well; the tile also used
// after the scf.if, the i32 tile and the else-branch's second 4x4 tile keep their own.

// CHECK-LABEL: func.func @versions
// CHECK:       %[[AFTER:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:  %[[SHARED:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:  scf.if
// CHECK-NEXT:    %[[INTS:.*]] = memref.alloc() : memref<8xi32>
// CHECK-NEXT:    memref.store %{{.*}}, %[[SHARED]]
// CHECK:         memref.store %{{.*}}, %[[INTS]]
// CHECK-NEXT:    memref.store %{{.*}}, %[[AFTER]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[SECOND:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:    memref.store %{{.*}}, %[[SHARED]]
// CHECK-NEXT:    memref.store %{{.*}}, %[[SECOND]]
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.load %[[AFTER]]
func.func @versions(%c: i1, %out: memref<16xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %kept_for_after = memref.alloc() : memref<4x4xf32>
  scf.if %c {
    %block = memref.alloc() : memref<4x4xf32>
    %ints = memref.alloc() : memref<8xi32>
    memref.store %f, %block[%i, %i] : memref<4x4xf32>
    %z = arith.constant 0 : i32
    memref.store %z, %ints[%i] : memref<8xi32>
    memref.store %f, %kept_for_after[%i, %i] : memref<4x4xf32>
  } else {
    %gather = memref.alloc() : memref<4x4xf32>
    %second = memref.alloc() : memref<4x4xf32>
    memref.store %f, %gather[%i, %i] : memref<4x4xf32>
    memref.store %f, %second[%i, %i] : memref<4x4xf32>
  }
  %v = memref.load %kept_for_after[%i, %i] : memref<4x4xf32>
  memref.store %v, %out[%i] : memref<16xf32>
  return
}

// -----

// Without an else branch there is nothing to share.

// CHECK-LABEL: func.func @one_version
// CHECK:       scf.if
// CHECK-NEXT:    memref.alloc() : memref<4x4xf32>
func.func @one_version(%c: i1, %out: memref<16xf32>) {
  %i = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.if %c {
    %block = memref.alloc() : memref<4x4xf32>
    memref.store %f, %block[%i, %i] : memref<4x4xf32>
    %v = memref.load %block[%i, %i] : memref<4x4xf32>
    memref.store %v, %out[%i] : memref<16xf32>
  }
  return
}
