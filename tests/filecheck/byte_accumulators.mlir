// PASS: byte-accumulators
// CONFIG: quirks=byte_accumulators_in_loops
// Quirk byte_accumulators_in_loops (triton_spirv/target.py; byte_accumulators.py): a
// reduction of i8 tensors whose combines keep low bits folds zero-extended bytes into an
// i32 accumulator and truncates once after; a max (not such a combine) and an i32
// reduction stay as they are.

#rows = affine_map<(d0, d1) -> (d0, d1)>
#columns = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @column_xor
// CHECK:       %[[INIT:.*]] = linalg.generic
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:       } -> tensor<8xi32>
// CHECK:       %[[FOLDED:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME:    ins(%{{.*}} : tensor<15x8xi8>) outs(%[[INIT]] : tensor<8xi32>)
// CHECK:       ^bb0(%[[IN:.*]]: i8, %[[ACC:.*]]: i32):
// CHECK:         %[[WIDE:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK:         %[[X:.*]] = arith.xori %[[ACC]], %[[WIDE]] : i32
// CHECK:         linalg.yield %[[X]] : i32
// CHECK:       %[[NARROW:.*]] = linalg.generic {{.*}} ins(%[[FOLDED]] : tensor<8xi32>)
// CHECK:         arith.trunci %{{.*}} : i32 to i8
// CHECK:       return %[[NARROW]] : tensor<8xi8>
func.func @column_xor(%rows: tensor<15x8xi8>, %first: tensor<8xi8>) -> tensor<8xi8> {
  %r = linalg.generic {indexing_maps = [#rows, #columns], iterator_types = ["reduction", "parallel"]}
      ins(%rows : tensor<15x8xi8>) outs(%first : tensor<8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %x = arith.xori %out, %in : i8
    linalg.yield %x : i8
  } -> tensor<8xi8>
  return %r : tensor<8xi8>
}

// Two combines and a byte from outside the body: each is computed in i32.
// CHECK-LABEL: func.func @add_then_or
// CHECK:       ^bb0(%[[IN:.*]]: i8, %[[ACC:.*]]: i32):
// CHECK:         %[[WIDE:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK:         %[[SUM:.*]] = arith.addi %[[ACC]], %[[WIDE]] : i32
// CHECK:         %[[MASK:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.ori %[[SUM]], %[[MASK]] : i32
// CHECK:       arith.trunci %{{.*}} : i32 to i8
func.func @add_then_or(%rows: tensor<15x8xi8>, %first: tensor<8xi8>, %mask: i8) -> tensor<8xi8> {
  %r = linalg.generic {indexing_maps = [#rows, #columns], iterator_types = ["reduction", "parallel"]}
      ins(%rows : tensor<15x8xi8>) outs(%first : tensor<8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %s = arith.addi %out, %in : i8
    %o = arith.ori %s, %mask : i8
    linalg.yield %o : i8
  } -> tensor<8xi8>
  return %r : tensor<8xi8>
}

// CHECK-LABEL: func.func @byte_max
// CHECK-NOT:   i32
// CHECK:       arith.maxsi %{{.*}} : i8
// CHECK-NOT:   i32
// CHECK:       return
func.func @byte_max(%rows: tensor<15x8xi8>, %first: tensor<8xi8>) -> tensor<8xi8> {
  %r = linalg.generic {indexing_maps = [#rows, #columns], iterator_types = ["reduction", "parallel"]}
      ins(%rows : tensor<15x8xi8>) outs(%first : tensor<8xi8>) {
  ^bb0(%in: i8, %out: i8):
    %m = arith.maxsi %out, %in : i8
    linalg.yield %m : i8
  } -> tensor<8xi8>
  return %r : tensor<8xi8>
}

// CHECK-LABEL: func.func @int_xor
// CHECK-NOT:   extui
// CHECK:       arith.xori %{{.*}} : i32
// CHECK-NOT:   trunci
// CHECK:       return
func.func @int_xor(%rows: tensor<15x8xi32>, %first: tensor<8xi32>) -> tensor<8xi32> {
  %r = linalg.generic {indexing_maps = [#rows, #columns], iterator_types = ["reduction", "parallel"]}
      ins(%rows : tensor<15x8xi32>) outs(%first : tensor<8xi32>) {
  ^bb0(%in: i32, %out: i32):
    %x = arith.xori %out, %in : i32
    linalg.yield %x : i32
  } -> tensor<8xi32>
  return %r : tensor<8xi32>
}

// 16 columns (byte lanes of a reduction in vectors among them) build there: left bytes.
// CHECK-LABEL: func.func @sixteen_columns
// CHECK-NOT:   i32
// CHECK:       arith.ori %{{.*}} : i8
// CHECK-NOT:   i32
// CHECK:       return
func.func @sixteen_columns(%rows: tensor<15x16xi8>, %first: tensor<16xi8>) -> tensor<16xi8> {
  %r = linalg.generic {indexing_maps = [#rows, #columns], iterator_types = ["reduction", "parallel"]}
      ins(%rows : tensor<15x16xi8>) outs(%first : tensor<16xi8>) {
  ^bb0(%in: i8, %out: i8):
    %o = arith.ori %out, %in : i8
    linalg.yield %o : i8
  } -> tensor<16xi8>
  return %r : tensor<16xi8>
}
