// PASS: program-loops
// CPU targets: a work-group runs consecutive programs of the grid's first dimension.
// The kernel gets the grid's first dimension as a new last parameter, its tiles stay
// in front of the loop, program_id(0) becomes the loop variable and num_programs(0)
// the parameter; program ids of the other dimensions stay as they are.

// CHECK-LABEL: func.func @store_ids
// CHECK-SAME: (%[[OUT:[^:]*]]: memref<?xi32>, %[[N:[^:]*]]: index)
// CHECK-SAME: opencl.arg_names = ["out", "num_programs_x"]
// CHECK-SAME: opencl.program_loop
// CHECK-NEXT:   %[[TILE:.*]] = memref.alloc() : memref<4xi32>
// CHECK-NEXT:   %[[GROUPS:.*]] = gpu.grid_dim x
// CHECK-NEXT:   %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[SUM:.*]] = arith.addi %[[N]], %[[GROUPS]]
// CHECK-NEXT:   %[[ROUNDED:.*]] = arith.subi %[[SUM]], %[[C1]]
// CHECK-NEXT:   %[[PER:.*]] = arith.divsi %[[ROUNDED]], %[[GROUPS]]
// CHECK-NEXT:   %[[GROUP:.*]] = gpu.block_id x
// CHECK-NEXT:   %[[FIRST:.*]] = arith.muli %[[GROUP]], %[[PER]]
// CHECK-NEXT:   %[[END:.*]] = arith.addi %[[FIRST]], %[[PER]]
// CHECK-NEXT:   %[[LAST:.*]] = arith.minsi %[[END]], %[[N]]
// CHECK:        scf.for %[[PROGRAM:.*]] = %[[FIRST]] to %[[LAST]] step %{{.*}} {
// CHECK-NEXT:     %[[Y:.*]] = gpu.block_id y
// CHECK-NEXT:     %[[ROW:.*]] = arith.muli %[[Y]], %[[N]]
// CHECK-NEXT:     %[[I:.*]] = arith.addi %[[ROW]], %[[PROGRAM]]
// CHECK:          memref.store %{{.*}}, %[[TILE]]
// CHECK-NEXT:     memref.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK-NEXT:   } {opencl.program_loop}
// CHECK-NEXT:   return
func.func @store_ids(%out: memref<?xi32>) attributes {opencl.arg_names = ["out"]} {
  %x = gpu.block_id x
  %tile = memref.alloc() : memref<4xi32>
  %y = gpu.block_id y
  %nx = gpu.grid_dim x
  %row = arith.muli %y, %nx : index
  %i = arith.addi %row, %x : index
  %v = arith.index_cast %i : index to i32
  %c0 = arith.constant 0 : index
  memref.store %v, %tile[%c0] : memref<4xi32>
  memref.store %v, %out[%i] : memref<?xi32>
  return
}

// -----

// Programs that communicate through atomics keep one program per group.
// CHECK-LABEL: func.func @count
// CHECK-SAME: (%{{[^:]*}}: memref<?xi32>)
// CHECK-NOT: opencl.program_loop
// CHECK-NOT: scf.for
// CHECK: memref.atomic_rmw
func.func @count(%counter: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %old = memref.atomic_rmw addi %one, %counter[%c0] : (i32, memref<?xi32>) -> i32
  return
}

// -----

// A while loop may wait for another program (a spin loop): kept as it is.
// CHECK-LABEL: func.func @wait
// CHECK-NOT: opencl.program_loop
// CHECK: scf.while
func.func @wait(%flag: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  scf.while : () -> () {
    %v = memref.load %flag[%c0] : memref<?xi32>
    %unset = arith.cmpi eq, %v, %zero : i32
    scf.condition(%unset)
  } do {
    scf.yield
  }
  return
}

// -----

// Device asserts (a hidden record parameter, failures named by program) and printf
// (output in program order) keep one program per group.
// CHECK-LABEL: func.func @checked
// CHECK-SAME: (%{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi32>)
// CHECK-NOT: opencl.program_loop
// CHECK-LABEL: func.func @printing
// CHECK-NOT: opencl.program_loop
// CHECK: gpu.printf
func.func @checked(%x: memref<?xf32>, %record: memref<?xi32>) attributes {opencl.asserts = [["k.py", 3 : i32, "x > 0"]]} {
  return
}
func.func @printing() {
  %x = gpu.block_id x
  gpu.printf "%ld\n", %x : index
  return
}

// -----

// Several work-items per group (GPU shapes) keep one program per group.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: opencl.program_loop
func.func @shared(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %t = gpu.thread_id x
  %v = memref.load %x[%t] : memref<?xf32>
  return
}
