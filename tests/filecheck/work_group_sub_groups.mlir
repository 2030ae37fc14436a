// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128 collectives=true sub_groups=true min_sub_group_size=4
// work_group_sharing.py for 128 work-items on a target with sub-group functions whose
// sub-groups hold at least 4 work-items (work_group_sub_groups.py), then canonicalize
// and cse. A sum: each work-item folds its elements (lid, lid + 128, ...) from -0.0,
// `gpu.subgroup_reduce` combines a sub-group's partials, each sub-group's first
// work-item writes its total to a `__local` tile of 128 / 4 slots, one barrier, and
// every work-item folds the `gpu.num_subgroups` totals into the accumulator's value set
// before the loop, in a register the load after it takes. No `gpu.all_reduce`, no
// halving steps, no barrier before the result is read.

// CHECK-LABEL: func.func @sum_of_exp
// CHECK-NOT:   gpu.all_reduce
// CHECK-NOT:   memref<f32>
// CHECK-DAG:   %[[NEG_ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       gpu.barrier
// CHECK-NEXT:  %[[PARTIAL:.*]] = scf.for %[[I:.*]] = %thread_id_x to %c256 step %c128 iter_args(%[[P:.*]] = %[[NEG_ZERO]]) -> (f32) {
// CHECK-NEXT:    %[[X:.*]] = memref.load %{{.*}}[%[[I]]] : memref<256xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[P]], %[[E]] : f32
// CHECK-NEXT:    scf.yield %[[S]] : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[SUB_TOTAL:.*]] = gpu.subgroup_reduce add %[[PARTIAL]] uniform : (f32) -> f32
// CHECK-NEXT:  %[[TOTALS:.*]] = memref.alloc() : memref<32xf32>
// CHECK-NEXT:  %[[LANE:.*]] = gpu.lane_id
// CHECK-NEXT:  %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK-NEXT:  scf.if %[[LEADER]] {
// CHECK-NEXT:    %[[SUB_GROUP:.*]] = gpu.subgroup_id : index
// CHECK-NEXT:    memref.store %[[SUB_TOTAL]], %[[TOTALS]][%[[SUB_GROUP]]] : memref<32xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  %[[COUNT:.*]] = gpu.num_subgroups : index
// CHECK-NEXT:  %[[TOTAL:.*]] = scf.for %[[J:.*]] = %c0 to %[[COUNT]] step %c1 iter_args(%[[T:.*]] = %[[NEG_ZERO]]) -> (f32) {
// CHECK-NEXT:    %[[THEIRS:.*]] = memref.load %[[TOTALS]][%[[J]]] : memref<32xf32>
// CHECK-NEXT:    %[[U:.*]] = arith.addf %[[T]], %[[THEIRS]] : f32
// CHECK-NEXT:    scf.yield %[[U]] : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[NEW:.*]] = arith.addf %[[TOTAL]], %[[ZERO]] : f32
// CHECK:       scf.if %{{.*}} {
// CHECK-NEXT:    memref.store %[[NEW]], %{{.*}}[%c0] : memref<?xf32>
// CHECK-NEXT:  } {opencl.single_work_item}
// CHECK-NOT:   gpu.barrier
// CHECK:       return

func.func @sum_of_exp(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<256xf32>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    memref.store %zero, %t[%i] : memref<256xf32>
    scf.reduce
  }
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %t[%i] : memref<256xf32>
    %e = math.exp %x : f32
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %a, %e : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %sum = memref.load %acc[] : memref<f32>
  memref.store %sum, %out[%c0] : memref<?xf32>
  return
}

