// PASS: work-group-rows
// CONFIG: work_items=128
// A row max of a 64x32 tile (`tl.max(x, axis=1)`): 64 rows for 128 work-items. Each
// row's 31 columns after the first are split into 2 interleaved strips (columns 0, 2,
// 4, ... and 1, 3, 5, ... of the view), folded by a parallel loop over (row, strip)
// into partials; the loop over the columns then folds the row's 2 partials into the
// accumulator.
// CHECK-LABEL: func.func @row_max
// CHECK:       %[[PARTIALS:.*]] = memref.alloc() : memref<64x2xf32>
// CHECK:       scf.parallel (%[[ROW:.*]], %[[STRIP:.*]]) = (%c0{{.*}}, %c0{{.*}}) to (%c64{{.*}}, %c2{{.*}})
// CHECK:         %[[START:.*]] = memref.load %{{.*}}[%[[ROW]], %[[STRIP]]]
// CHECK:         %[[NEXT:.*]] = arith.addi %[[STRIP]], %[[TWO:.*]] : index
// CHECK:         %[[FOLDED:.*]] = scf.for %[[C:.*]] = %[[NEXT]] to %c31{{.*}} step %[[TWO]] iter_args(%[[ACC:.*]] = %[[START]])
// CHECK:           %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[C]]]
// CHECK:           arith.maxnumf %[[ACC]], %[[X]] : f32
// CHECK:         memref.store %[[FOLDED]], %[[PARTIALS]][%[[ROW]], %[[STRIP]]]
// CHECK:       scf.parallel (%[[R:.*]]) = (%c0) to (%c64) step (%c1)
// CHECK-NEXT:    scf.for %[[S:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK-NEXT:      %[[P:.*]] = memref.load %[[PARTIALS]][%[[R]], %[[S]]]
// CHECK-NEXT:      %[[A:.*]] = memref.load %[[MAX:.*]][%[[R]]]
// CHECK-NEXT:      %[[M:.*]] = arith.maxnumf %[[A]], %[[P]] : f32
// CHECK-NEXT:      memref.store %[[M]], %[[MAX]][%[[R]]]
func.func @row_max(%x: memref<?xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c64 = arith.constant 64 : index
  %view = memref.reinterpret_cast %x to offset: [0], sizes: [64, 32], strides: [32, 1] : memref<?xf32> to memref<64x32xf32, strided<[32, 1]>>
  %tile = memref.alloc() : memref<64x32xf32>
  memref.copy %view, %tile : memref<64x32xf32, strided<[32, 1]>> to memref<64x32xf32>
  %first = memref.subview %tile[0, 0] [64, 1] [1, 1] : memref<64x32xf32> to memref<64xf32, strided<[32]>>
  %max = memref.alloc() : memref<64xf32>
  memref.copy %first, %max : memref<64xf32, strided<[32]>> to memref<64xf32>
  %rest = memref.subview %tile[0, 1] [64, 31] [1, 1] : memref<64x32xf32> to memref<64x31xf32, strided<[32, 1], offset: 1>>
  scf.parallel (%r) = (%c0) to (%c64) step (%c1) {
    scf.for %c = %c0 to %c31 step %c1 {
      %v = memref.load %rest[%r, %c] : memref<64x31xf32, strided<[32, 1], offset: 1>>
      %a = memref.load %max[%r] : memref<64xf32>
      %m = arith.maxnumf %a, %v : f32
      memref.store %m, %max[%r] : memref<64xf32>
    }
    scf.reduce
  }
  memref.copy %max, %out : memref<64xf32> to memref<64xf32>
  return
}
// -----
// 128 rows: one work-item per row already, nothing to split.
// CHECK-LABEL: func.func @one_row_per_work_item
// CHECK-NOT:   memref.alloc
// CHECK:       scf.parallel (%{{[^,]*}}) =
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c31 step %c1
func.func @one_row_per_work_item(%tile: memref<128x31xf32>, %sum: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%r) = (%c0) to (%c128) step (%c1) {
    scf.for %c = %c0 to %c31 step %c1 {
      %v = memref.load %tile[%r, %c] : memref<128x31xf32>
      %a = memref.load %sum[%r] : memref<128xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%r] : memref<128xf32>
    }
    scf.reduce
  }
  return
}
// -----
// 8 rows of 7 columns for 128 work-items: at most 3 strips of two columns, rounded
// down to 2 (a power of two: a work-item's row and strip are a shift and a mask of its
// id, not a division by 3).
// CHECK-LABEL: func.func @odd_columns
// CHECK:       memref.alloc() : memref<8x2xf32>
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c8{{.*}}, %c2{{.*}})
func.func @odd_columns(%tile: memref<8x7xf32>, %acc: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %max = memref.alloc() : memref<8xf32>
  scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
    scf.for %c = %c0 to %c7 step %c1 {
      %v = memref.load %tile[%r, %c] : memref<8x7xf32>
      %a = memref.load %max[%r] : memref<8xf32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %max[%r] : memref<8xf32>
    }
    scf.reduce
  }
  memref.copy %max, %acc : memref<8xf32> to memref<8xf32>
  return
}
// -----
// Inductor's persistent reduction over an [XBLOCK=8, 1024] tile (`tl.sum(x, 1)[:, None]`):
// the row totals are an [8, 1] tile read at [row, 0], the rows' other 1023 columns an
// [8, 1, 1023] view read at [row, 0, column]. Split as a rank-1 accumulator is: 16
// strips of each row (128 / 8) into [8, 16] partials, then each row's owner folds 16.
// CHECK-LABEL: func.func @persistent_rows
// CHECK:       %[[PARTIALS:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:       scf.parallel (%[[ROW:.*]], %[[STRIP:.*]]) = (%c0{{.*}}, %c0{{.*}}) to (%c8{{.*}}, %c16{{.*}})
// CHECK:         memref.load %{{.*}}[%[[ROW]], %[[ZERO:.*]], %[[STRIP]]] : memref<8x1x1023xf32, {{.*}}>
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %c1023{{.*}} step %{{.*}} iter_args
// CHECK:           memref.load %{{.*}}[%[[ROW]], %[[ZERO]], %[[C]]] : memref<8x1x1023xf32, {{.*}}>
// CHECK:         memref.store %{{.*}}, %[[PARTIALS]][%[[ROW]], %[[STRIP]]]
// CHECK:       scf.parallel (%[[R:.*]]) = (%c0) to (%c8) step (%c1)
// CHECK-NEXT:    scf.for %[[S:.*]] = %c0{{.*}} to %c16{{.*}} step
// CHECK-NEXT:      %[[P:.*]] = memref.load %[[PARTIALS]][%[[R]], %[[S]]]
// CHECK-NEXT:      %[[A:.*]] = memref.load %[[SUM:.*]][%[[R]], %c0] : memref<8x1xf32>
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[A]], %[[P]] : f32
// CHECK-NEXT:      memref.store %[[T]], %[[SUM]][%[[R]], %c0] : memref<8x1xf32>
func.func @persistent_rows(%x: memref<?xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c1023 = arith.constant 1023 : index
  %view = memref.reinterpret_cast %x to offset: [0], sizes: [8, 1024], strides: [1024, 1] : memref<?xf32> to memref<8x1024xf32, strided<[1024, 1]>>
  %tile = memref.alloc() : memref<8x1024xf32>
  memref.copy %view, %tile : memref<8x1024xf32, strided<[1024, 1]>> to memref<8x1024xf32>
  %first = memref.subview %tile[0, 0] [8, 1] [1, 1] : memref<8x1024xf32> to memref<8xf32, strided<[1024]>>
  %row = memref.alloc() : memref<8xf32>
  memref.copy %first, %row : memref<8xf32, strided<[1024]>> to memref<8xf32>
  %rest = memref.subview %tile[0, 1] [8, 1023] [1, 1] : memref<8x1024xf32> to memref<8x1023xf32, strided<[1024, 1], offset: 1>>
  %rest3 = memref.expand_shape %rest [[0, 1], [2]] output_shape [8, 1, 1023] : memref<8x1023xf32, strided<[1024, 1], offset: 1>> into memref<8x1x1023xf32, strided<[1024, 1024, 1], offset: 1>>
  %sum = memref.expand_shape %row [[0, 1]] output_shape [8, 1] : memref<8xf32> into memref<8x1xf32>
  scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
    scf.for %c = %c0 to %c1023 step %c1 {
      %v = memref.load %rest3[%r, %c0, %c] : memref<8x1x1023xf32, strided<[1024, 1024, 1], offset: 1>>
      %a = memref.load %sum[%r, %c0] : memref<8x1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%r, %c0] : memref<8x1xf32>
    }
    scf.reduce
  }
  memref.copy %row, %out : memref<8xf32> to memref<8xf32>
  return
}
