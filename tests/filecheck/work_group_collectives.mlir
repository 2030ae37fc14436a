// PASS: work-group-sharing,canonicalize,cse
// CONFIG: work_items=128 collectives=true
// work_group_sharing.py for 128 work-items on a target with work-group collective
// functions (work_group_collectives.py), then canonicalize and cse. A reduction with a
// sum, minimum or maximum: each work-item folds its elements (lid, lid + 128, ...) from
// the combiner's identity in a register, one `gpu.all_reduce` combines the partials,
// and every work-item folds the total into the accumulator's value set before the loop,
// in a register that the loads after it take (work-item 0 updates the accumulator
// instead where anything else reads or writes it: @product_read_before). No `__local`
// partials, no halving steps: the barrier left is the analysis's own (the fill before
// the fold reads the tile).

// CHECK-LABEL: func.func @sum_of_exp
// CHECK-NOT:   memref<128xf32>
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
// CHECK-NEXT:  %[[TOTAL:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform {
// CHECK-NEXT:  } : (f32) -> f32
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
// -----

// tl.max (maxnumf: NaN gives way to the other operand) over 63 elements: the partials
// start from NaN (maxnumf's identity) and reduce as ordered integers, NaN made the
// least (0xFFC00000 = -4194304), negative values' magnitude bits flipped (xori
// 0x7FFFFFFF); the inverse after the collective.

// CHECK-LABEL: func.func @max_ignoring_nan
// CHECK-DAG:   %[[MAGNITUDE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG:   %[[NAN_KEY:.*]] = arith.constant -4194304 : i32
// CHECK-DAG:   %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:       %[[PARTIAL:.*]] = scf.for %{{.*}} = %thread_id_x to %c63 step %c128 iter_args(%[[P:.*]] = %[[NAN]]) -> (f32) {
// CHECK:         arith.maxnumf %[[P]]
// CHECK:       %[[IS_NAN:.*]] = arith.cmpf uno, %[[PARTIAL]], %[[PARTIAL]] : f32
// CHECK-NEXT:  %[[BITS:.*]] = arith.bitcast %[[PARTIAL]] : f32 to i32
// CHECK-NEXT:  %[[CANONICAL:.*]] = arith.select %[[IS_NAN]], %[[NAN_KEY]], %[[BITS]] : i32
// CHECK-NEXT:  %[[NEGATIVE:.*]] = arith.cmpi slt, %[[CANONICAL]], %{{.*}} : i32
// CHECK-NEXT:  %[[FLIPPED:.*]] = arith.xori %[[CANONICAL]], %[[MAGNITUDE]] : i32
// CHECK-NEXT:  %[[KEY:.*]] = arith.select %[[NEGATIVE]], %[[FLIPPED]], %[[CANONICAL]] : i32
// CHECK-NEXT:  %[[MAX_KEY:.*]] = gpu.all_reduce maxsi %[[KEY]] uniform {
// CHECK-NEXT:  } : (i32) -> i32
// CHECK-NEXT:  %[[NEGATIVE2:.*]] = arith.cmpi slt, %[[MAX_KEY]], %{{.*}} : i32
// CHECK-NEXT:  %[[FLIPPED2:.*]] = arith.xori %[[MAX_KEY]], %[[MAGNITUDE]] : i32
// CHECK-NEXT:  %[[MAX_BITS:.*]] = arith.select %[[NEGATIVE2]], %[[FLIPPED2]], %[[MAX_KEY]] : i32
// CHECK-NEXT:  %[[MAX:.*]] = arith.bitcast %[[MAX_BITS]] : i32 to f32
// CHECK-NEXT:  arith.maxnumf %[[MAX]], %{{.*}} : f32

func.func @max_ignoring_nan(%view: memref<256xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %ninf = arith.constant 0xFF800000 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %ninf, %acc[] : memref<f32>
  scf.for %i = %c0 to %c63 step %c1 {
    %x = memref.load %view[%i] : memref<256xf32>
    %a = memref.load %acc[] : memref<f32>
    %m = arith.maxnumf %a, %x : f32
    memref.store %m, %acc[] : memref<f32>
  }
  %max = memref.load %acc[] : memref<f32>
  memref.store %max, %out[%c0] : memref<?xf32>
  return
}
// -----

// tl.maximum(propagate_nan=ALL) (maximumf) on f64: NaN is the greatest key
// (0x7FF8000000000000), the partials start from -inf.

// CHECK-LABEL: func.func @max_propagating_nan
// CHECK-DAG:   %[[NAN_KEY:.*]] = arith.constant 9221120237041090560 : i64
// CHECK-DAG:   %[[NEG_INF:.*]] = arith.constant 0xFFF0000000000000 : f64
// CHECK:       %[[PARTIAL:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[NEG_INF]]) -> (f64) {
// CHECK:       arith.select %{{.*}}, %[[NAN_KEY]], %{{.*}} : i64
// CHECK:       gpu.all_reduce maxsi %{{.*}} uniform {
// CHECK-NEXT:  } : (i64) -> i64
// CHECK:       %[[MAX:.*]] = arith.bitcast %{{.*}} : i64 to f64
// CHECK:       memref.store %[[MAX]], %{{.*}} : memref<?xf64>

func.func @max_propagating_nan(%view: memref<256xf64>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %acc = memref.alloc() : memref<f64>
  memref.store %ninf, %acc[] : memref<f64>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xf64>
    %a = memref.load %acc[] : memref<f64>
    %m = arith.maximumf %a, %x : f64
    memref.store %m, %acc[] : memref<f64>
  }
  %max = memref.load %acc[] : memref<f64>
  memref.store %max, %out[%c0] : memref<?xf64>
  return
}
// -----

// A sum of i8: no collective of that width; widened (sign-extended) to i32 and
// truncated back, which wraps as the i8 sum would.

// CHECK-LABEL: func.func @sum_of_bytes
// CHECK:       %[[PARTIAL:.*]] = scf.for {{.*}} -> (i8) {
// CHECK:       %[[WIDE:.*]] = arith.extsi %[[PARTIAL]] : i8 to i32
// CHECK-NEXT:  %[[TOTAL:.*]] = gpu.all_reduce add %[[WIDE]] uniform {
// CHECK-NEXT:  } : (i32) -> i32
// CHECK-NEXT:  %[[NARROW:.*]] = arith.trunci %[[TOTAL]] : i32 to i8
// CHECK:       memref.store %[[NARROW]], %{{.*}} : memref<?xi8>

func.func @sum_of_bytes(%view: memref<256xi8>, %out: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0 : i8
  %acc = memref.alloc() : memref<i8>
  memref.store %zero, %acc[] : memref<i8>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xi8>
    %a = memref.load %acc[] : memref<i8>
    %s = arith.addi %a, %x : i8
    memref.store %s, %acc[] : memref<i8>
  }
  %sum = memref.load %acc[] : memref<i8>
  memref.store %sum, %out[%c0] : memref<?xi8>
  return
}
// -----

// Unsigned minimum: its own collective; the partials start from all ones.

// CHECK-LABEL: func.func @unsigned_min
// CHECK:       %[[ONES:.*]] = arith.constant -1 : i32
// CHECK:       %[[PARTIAL:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ONES]]) -> (i32) {
// CHECK:       gpu.all_reduce minui %[[PARTIAL]] uniform {

func.func @unsigned_min(%view: memref<256xi32>, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %ones = arith.constant -1 : i32
  %acc = memref.alloc() : memref<i32>
  memref.store %ones, %acc[] : memref<i32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xi32>
    %a = memref.load %acc[] : memref<i32>
    %m = arith.minui %a, %x : i32
    memref.store %m, %acc[] : memref<i32>
  }
  %min = memref.load %acc[] : memref<i32>
  memref.store %min, %out[%c0] : memref<?xi32>
  return
}
// -----

// A product has no collective: the `__local` tree of partials, one step in which 16
// work-items fold 8 partials each (128 -> 16; every partner exists: the loop's length
// is known), then every work-item folds the 16 into the accumulator's initial value in
// a register (the accumulator is set right before the loop and only read after it):
// no single-work-item section and no barrier before the result is read, 2 barriers
// where halving took 7 and a section 8.

// CHECK-LABEL: func.func @product
// CHECK-NOT:   gpu.all_reduce
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:       %[[PARTIALS:.*]] = memref.alloc() : memref<128xf32>
// CHECK:       arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:       gpu.barrier
// CHECK:       %[[FOLDS:.*]] = arith.cmpi ult, %thread_id_x, %c16{{.*}} : index
// CHECK-NEXT:  scf.if %[[FOLDS]] {
// CHECK-NOT:   scf.if
// CHECK-COUNT-7: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:   arith.mulf
// CHECK:       gpu.barrier
// CHECK-NEXT:  %[[TOTAL:.*]] = scf.for %[[K:.*]] = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args(%[[T:.*]] = %[[ONE]]) -> (f32) {
// CHECK-NEXT:    %[[P:.*]] = memref.load %[[PARTIALS]][%[[K]]] : memref<128xf32>
// CHECK-NEXT:    arith.mulf %[[T]], %[[P]] : f32
// CHECK:       scf.if
// CHECK-NEXT:    memref.store %[[TOTAL]], %{{.*}}[%c0{{.*}}] : memref<?xf32>
// CHECK-NOT:   gpu.barrier
// CHECK-NOT:   gpu.all_reduce
// CHECK:       return

func.func @product(%view: memref<256xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %one, %acc[] : memref<f32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xf32>
    %a = memref.load %acc[] : memref<f32>
    %p = arith.mulf %a, %x : f32
    memref.store %p, %acc[] : memref<f32>
  }
  %prod = memref.load %acc[] : memref<f32>
  memref.store %prod, %out[%c0] : memref<?xf32>
  return
}

// -----

// Of a length known only at run time, at most 128 partials exist: a step's work-item
// holds one only below the count, each partner is tested, and only the partials that
// exist (at most 16) are folded.

// CHECK-LABEL: func.func @product_of_n
// CHECK:       %[[VALID:.*]] = arith.minsi %{{.*}}, %c128{{.*}} : index
// CHECK:       memref.alloc() : memref<128xf32>
// CHECK:       gpu.barrier
// CHECK:       arith.cmpi ult, %thread_id_x, %[[VALID]] : index
// CHECK-COUNT-7: scf.if %{{.*}} -> (f32) {
// CHECK:       gpu.barrier
// CHECK:       %[[LEFT:.*]] = arith.minsi %[[VALID]], %c16{{.*}} : index
// CHECK:       scf.for %{{.*}} = %c0{{.*}} to %[[LEFT]] step %c1{{.*}} iter_args
// CHECK:       return

func.func @product_of_n(%view: memref<?xf32>, %n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %one, %acc[] : memref<f32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %view[%i] : memref<?xf32>
    %a = memref.load %acc[] : memref<f32>
    %p = arith.mulf %a, %x : f32
    memref.store %p, %acc[] : memref<f32>
  }
  %prod = memref.load %acc[] : memref<f32>
  memref.store %prod, %out[%c0] : memref<?xf32>
  return
}

// -----

// An accumulator also read before the loop: work-item 0 folds the partials into it,
// and a barrier comes before every work-item reads it.

// CHECK-LABEL: func.func @product_read_before
// CHECK:       %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK:       arith.cmpi ult, %thread_id_x, %c16{{.*}} : index
// CHECK:       gpu.barrier
// CHECK-NEXT:  scf.if %{{.*}} {
// CHECK-NEXT:    %[[OLD:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT:    %[[TOTAL:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[OLD]]) -> (f32) {
// CHECK:         memref.store %[[TOTAL]], %[[ACC]][] : memref<f32>
// CHECK-NEXT:  } {opencl.single_work_item}
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  memref.load %[[ACC]][] : memref<f32>
// CHECK:       return

func.func @product_read_before(%view: memref<256xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %one, %acc[] : memref<f32>
  %before = memref.load %acc[] : memref<f32>
  memref.store %before, %out[%c1] : memref<?xf32>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xf32>
    %a = memref.load %acc[] : memref<f32>
    %p = arith.mulf %a, %x : f32
    memref.store %p, %acc[] : memref<f32>
  }
  %prod = memref.load %acc[] : memref<f32>
  memref.store %prod, %out[%c0] : memref<?xf32>
  return
}

// -----

// f16 maximum: the exact f32 values reduce (ordered keys of f32) and return to f16.

// CHECK-LABEL: func.func @half_max
// CHECK:       %[[PARTIAL:.*]] = scf.for {{.*}} -> (f16) {
// CHECK:       %[[WIDE:.*]] = arith.extf %[[PARTIAL]] : f16 to f32
// CHECK:       arith.bitcast %[[WIDE]] : f32 to i32
// CHECK:       gpu.all_reduce maxsi %{{.*}} uniform {
// CHECK-NEXT:  } : (i32) -> i32
// CHECK:       %[[TOTAL:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:  %[[NARROW:.*]] = arith.truncf %[[TOTAL]] : f32 to f16
// CHECK:       arith.maxnumf %[[NARROW]], %{{.*}} : f16

func.func @half_max(%view: memref<256xf16>, %out: memref<?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFC00 : f16
  %acc = memref.alloc() : memref<f16>
  memref.store %ninf, %acc[] : memref<f16>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xf16>
    %a = memref.load %acc[] : memref<f16>
    %m = arith.maxnumf %a, %x : f16
    memref.store %m, %acc[] : memref<f16>
  }
  %max = memref.load %acc[] : memref<f16>
  memref.store %max, %out[%c0] : memref<?xf16>
  return
}

// -----

// An f16 sum keeps the tree: in f32 it would round differently.

// CHECK-LABEL: func.func @half_sum
// CHECK-NOT:   gpu.all_reduce
// CHECK:       memref.alloc() : memref<128xf16>
// CHECK-NOT:   gpu.all_reduce
// CHECK:       return

func.func @half_sum(%view: memref<256xf16>, %out: memref<?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f16
  %acc = memref.alloc() : memref<f16>
  memref.store %zero, %acc[] : memref<f16>
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %view[%i] : memref<256xf16>
    %a = memref.load %acc[] : memref<f16>
    %s = arith.addf %a, %x : f16
    memref.store %s, %acc[] : memref<f16>
  }
  %sum = memref.load %acc[] : memref<f16>
  memref.store %sum, %out[%c0] : memref<?xf16>
  return
}

// -----

// Inductor's persistent reduction (`tl.sum(x, 1)[:, None]` on an [XBLOCK=1, 1024]
// tile): the row's total lives in a one-element [1, 1] tile, a view of the memref<1xf32>
// that the first element was copied into, and the loop reads the other 1023 through a
// [1, 1, 1023] view at [0, 0, i]. The same collective as a rank-0 accumulator: every
// work-item folds its elements, one all-reduce, the total in a register that the read
// after the loop takes; no work-item-0 loop over the row.

// CHECK-LABEL: func.func @persistent_row
// CHECK:       gpu.barrier
// CHECK-NEXT:  %[[FIRST:.*]] = memref.load %{{.*}}[%c0] : memref<1xf32, strided<[1024]>>
// CHECK:       %[[PARTIAL:.*]] = scf.for %[[I:.*]] = %thread_id_x to %c1023 step %c128 iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK-NEXT:    memref.load %{{.*}}[%c0, %c0, %[[I]]] : memref<1x1x1023xf32, {{.*}}>
// CHECK:       %[[TOTAL:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform {
// CHECK:       %[[ROW:.*]] = arith.addf %[[FIRST]], %[[TOTAL]] : f32
// CHECK-NOT:   opencl.single_work_item
// CHECK:       arith.divf %[[ROW]], %{{.*}} : f32
// CHECK-NOT:   gpu.all_reduce
// CHECK:       return

func.func @persistent_row(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1023 = arith.constant 1023 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  %n = arith.constant 1024.0 : f32
  %t = memref.alloc() : memref<1x1024xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    memref.store %one, %t[%c0, %i] : memref<1x1024xf32>
    scf.reduce
  }
  %first = memref.subview %t[0, 0] [1, 1] [1, 1] : memref<1x1024xf32> to memref<1xf32, strided<[1024]>>
  %row = memref.alloc() : memref<1xf32>
  memref.copy %first, %row : memref<1xf32, strided<[1024]>> to memref<1xf32>
  %rest = memref.subview %t[0, 1] [1, 1023] [1, 1] : memref<1x1024xf32> to memref<1x1023xf32, strided<[1024, 1], offset: 1>>
  %rest3 = memref.expand_shape %rest [[0, 1], [2]] output_shape [1, 1, 1023] : memref<1x1023xf32, strided<[1024, 1], offset: 1>> into memref<1x1x1023xf32, strided<[1024, 1024, 1], offset: 1>>
  %acc = memref.expand_shape %row [[0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
  scf.for %i = %c0 to %c1023 step %c1 {
    %x = memref.load %rest3[%c0, %c0, %i] : memref<1x1x1023xf32, strided<[1024, 1024, 1], offset: 1>>
    %a = memref.load %acc[%c0, %c0] : memref<1x1xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[%c0, %c0] : memref<1x1xf32>
  }
  %sum = memref.load %acc[%c0, %c0] : memref<1x1xf32>
  %mean = arith.divf %sum, %n : f32
  memref.store %mean, %out[%c0] : memref<?xf32>
  return
}
