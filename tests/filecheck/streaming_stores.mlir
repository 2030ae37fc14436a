// PASS: streaming-stores
// The direct path of a stream-forwarded vector add: out is written once, at the
// loop's index, by full vectors, and never read. The loop is versioned on the bytes
// the launch stores (programs times 64 vectors of 64 bytes against 16 MiB); the
// streaming copy's store is non-temporal, the other copy's as it was.

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>
// CHECK:        %[[OV:.*]] = memref.reinterpret_cast %[[OUT]]
// CHECK:        %[[GX:.*]] = gpu.grid_dim x
// CHECK-NEXT:   %[[GY:.*]] = gpu.grid_dim y
// CHECK-NEXT:   %[[GXY:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK-NEXT:   %[[GZ:.*]] = gpu.grid_dim z
// CHECK-NEXT:   %[[PROGRAMS:.*]] = arith.muli %[[GXY]], %[[GZ]]
// CHECK-NEXT:   %[[PER:.*]] = arith.constant 4096 : index
// CHECK-NEXT:   %[[BYTES:.*]] = arith.muli %[[PROGRAMS]], %[[PER]]
// CHECK-NEXT:   %[[LIMIT:.*]] = arith.constant 16777216 : index
// CHECK-NEXT:   %[[LARGE:.*]] = arith.cmpi uge, %[[BYTES]], %[[LIMIT]]
// CHECK-NEXT:   scf.if %[[LARGE]] {
// CHECK-NEXT:     scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       vector.load
// CHECK-NEXT:       vector.load
// CHECK-NEXT:       %[[SUM:.*]] = arith.addf
// CHECK-NEXT:       vector.store %[[SUM]], %[[OV]][%[[I]]] {nontemporal = true}
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       vector.load
// CHECK-NEXT:       vector.load
// CHECK-NEXT:       %[[SUM2:.*]] = arith.addf
// CHECK-NEXT:       vector.store %[[SUM2]], %[[OV]][%[[J]]] :
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   return
func.func @add(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>, %offs: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %xv = memref.reinterpret_cast %x to offset: [%offs], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %yv = memref.reinterpret_cast %y to offset: [%offs], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %ov = memref.reinterpret_cast %out to offset: [%offs], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %c1024 step %c16 {
    %a = vector.load %xv[%i] : memref<1024xf32, strided<[1], offset: ?>>, vector<16xf32>
    %b = vector.load %yv[%i] : memref<1024xf32, strided<[1], offset: ?>>, vector<16xf32>
    %s = arith.addf %a, %b : vector<16xf32>
    vector.store %s, %ov[%i] : memref<1024xf32, strided<[1], offset: ?>>, vector<16xf32>
  }
  return
}

// -----

// Rows of a 2-D block: the bytes per program count the constant row loop around the
// stored loop too (8 rows of 16 vectors of 64 bytes).
// CHECK-LABEL: func.func @rows
// CHECK:        scf.for
// CHECK:          arith.constant 8192 : index
// CHECK:          scf.if
// CHECK:            vector.store {{.*}} {nontemporal = true}
// CHECK:          } else {
// CHECK-NOT:        nontemporal
// CHECK:          }
func.func @rows(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %xv = memref.reinterpret_cast %x to offset: [0], sizes: [8, 256], strides: [256, 1] : memref<?xf32> to memref<8x256xf32, strided<[256, 1]>>
  %ov = memref.reinterpret_cast %out to offset: [0], sizes: [8, 256], strides: [256, 1] : memref<?xf32> to memref<8x256xf32, strided<[256, 1]>>
  scf.for %r = %c0 to %c8 step %c1 {
    scf.for %i = %c0 to %c256 step %c16 {
      %a = vector.load %xv[%r, %i] : memref<8x256xf32, strided<[256, 1]>>, vector<16xf32>
      %e = math.exp %a : vector<16xf32>
      vector.store %e, %ov[%r, %i] : memref<8x256xf32, strided<[256, 1]>>, vector<16xf32>
    }
  }
  return
}

// -----

// Left as they were: a buffer the kernel also reads (an in-place update), a store
// into a work-group tile, a loop that steps by less than a vector (overlapping
// stores), a kernel with atomics (programs may wait for each other's stores), and a
// column (the last index is not the loop's).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: nontemporal
// CHECK-NOT: scf.if
// CHECK: return
func.func @kept(%x: memref<?xf32>, %out: memref<?xf32>, %counter: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %tile = memref.alloc() : memref<1024xf32>
  scf.for %i = %c0 to %c1024 step %c16 {
    %a = vector.load %x[%i] : memref<?xf32>, vector<16xf32>
    %b = arith.addf %a, %a : vector<16xf32>
    vector.store %b, %x[%i] : memref<?xf32>, vector<16xf32>
    vector.store %b, %tile[%i] : memref<1024xf32>, vector<16xf32>
  }
  scf.for %i = %c0 to %c1024 step %c8 {
    %a = vector.load %tile[%i] : memref<1024xf32>, vector<16xf32>
    vector.store %a, %out[%i] : memref<?xf32>, vector<16xf32>
  }
  return
}

// CHECK-LABEL: func.func @with_atomics
// CHECK-NOT: nontemporal
// CHECK: memref.atomic_rmw
func.func @with_atomics(%x: memref<?xf32>, %out: memref<?xf32>, %counter: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1 : i32
  scf.for %i = %c0 to %c1024 step %c16 {
    %a = vector.load %x[%i] : memref<?xf32>, vector<16xf32>
    vector.store %a, %out[%i] : memref<?xf32>, vector<16xf32>
  }
  %old = memref.atomic_rmw addi %one, %counter[%c0] : (i32, memref<?xi32>) -> i32
  return
}

// CHECK-LABEL: func.func @column
// CHECK-NOT: nontemporal
// CHECK: return
func.func @column(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %ov = memref.reinterpret_cast %out to offset: [0], sizes: [16, 16], strides: [16, 1] : memref<?xf32> to memref<16x16xf32, strided<[16, 1]>>
  scf.for %r = %c0 to %c16 step %c16 {
    %a = vector.load %x[%r] : memref<?xf32>, vector<16xf32>
    vector.store %a, %ov[%r, %c0] : memref<16x16xf32, strided<[16, 1]>>, vector<16xf32>
  }
  return
}
