// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128
// A tensor atomic (a histogram's `tl.atomic_add(bins + x, 1, mask=mask)`): the loop
// over its 1024 elements is distributed over the 128 work-items like the loop that
// wrote its tiles (chunks of 4), so both tiles become private arrays and no
// single-work-item section or barrier is left.

// CHECK-LABEL: func.func @histogram
// CHECK-NOT:   memref.alloc()
// CHECK-NOT:   opencl.single_work_item
// CHECK-NOT:   gpu.barrier
// CHECK-DAG:   memref.alloca() : memref<8xi64>
// CHECK-DAG:   memref.alloca() : memref<8xi1>
// CHECK:       scf.for
// CHECK:       memref.atomic_rmw addi
// CHECK-NOT:   gpu.barrier
// CHECK:       return
func.func @histogram(%x: memref<?xi32>, %bins: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1 : i32
  %mask = memref.alloc() : memref<1024xi1>
  %idx = memref.alloc() : memref<1024xi64>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %v = memref.load %x[%i] : memref<?xi32>
    %w = arith.extsi %v : i32 to i64
    memref.store %w, %idx[%i] : memref<1024xi64>
    %m = arith.cmpi slt, %i, %n : index
    memref.store %m, %mask[%i] : memref<1024xi1>
    scf.reduce
  }
  scf.for %i = %c0 to %c1024 step %c1 {
    %k = memref.load %idx[%i] : memref<1024xi64>
    %m = memref.load %mask[%i] : memref<1024xi1>
    scf.if %m {
      %a = arith.index_cast %k : i64 to index
      %old = memref.atomic_rmw addi %one, %bins[%a] : (i32, memref<?xi32>) -> i32
    }
  }
  return
}

// -----

// A column sum of a 128x16 tile (`tl.sum(x, axis=0)`; float4 steps): 8 row strips of
// 16 columns sum 16 rows each on all 128 work-items into __local partials; after one
// barrier the owners of the accumulator fold the 8 partials of their float4.

// CHECK-LABEL: func.func @column_sum
// CHECK:       %[[PARTIALS:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:       scf.for
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK:       arith.addf %{{.*}} : f32
// CHECK:       memref.store %{{.*}}, %[[PARTIALS]]
// CHECK:       gpu.barrier
// CHECK-NEXT:  scf.for %{{.*}} = %c0 to %c8 step %c1
// CHECK-NOT:   gpu.barrier
// CHECK:       vector.load %[[PARTIALS]]
// CHECK:       arith.addf %{{.*}} : vector<4xf32>
func.func @column_sum(%x: memref<128x16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %acc = memref.alloc() : memref<16xf32>
  scf.parallel (%c) = (%c0) to (%c16) step (%c4) {
    %v = vector.load %x[%c0, %c] : memref<128x16xf32>, vector<4xf32>
    vector.store %v, %acc[%c] : memref<16xf32>, vector<4xf32>
    scf.reduce
  }
  scf.for %r = %c1 to %c128 step %c1 {
    scf.parallel (%c) = (%c0) to (%c16) step (%c4) {
      %v = vector.load %x[%r, %c] : memref<128x16xf32>, vector<4xf32>
      %a = vector.load %acc[%c] : memref<16xf32>, vector<4xf32>
      %s = arith.addf %a, %v : vector<4xf32>
      vector.store %s, %acc[%c] : memref<16xf32>, vector<4xf32>
      scf.reduce
    }
  }
  scf.parallel (%c) = (%c0) to (%c16) step (%c4) {
    %a = vector.load %acc[%c] : memref<16xf32>, vector<4xf32>
    vector.store %a, %out[%c] : memref<16xf32>, vector<4xf32>
    scf.reduce
  }
  return
}
