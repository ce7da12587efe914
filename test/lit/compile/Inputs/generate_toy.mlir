// generate_loop.test: a toy of mdc.generate's convention
// (docs/mdc-generate.md), plain tensor functions with state: a
// vocabulary of 8, a prompt of at most 4 ids. @prefill keeps the prompt's
// last id and predicts it + 1; @decode predicts (token + the id it kept +
// position) mod 8 and keeps the token. After the prompt 3 5 (length 2):
// 6, then (6+5+2)%8 = 5, (5+6+3)%8 = 6, (6+5+4)%8 = 7, (7+6+5)%8 = 2.
// A loop whose state did not survive its steps would give 6 0 2 4 6.
util.global private mutable @kept = dense<0> : tensor<1xi64>

util.func private @one_hot(%k: i64) -> tensor<1x8xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<1x8xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %k : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<1x8xf32>
  util.return %h : tensor<1x8xf32>
}

util.func public @prefill(%ids: tensor<1x4xi64>, %length: tensor<1xi64>) -> tensor<1x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : i64
  %c8 = arith.constant 8 : i64
  %n = tensor.extract %length[%c0] : tensor<1xi64>
  %at = arith.subi %n, %c1 : i64
  %ati = arith.index_cast %at : i64 to index
  %last = tensor.extract %ids[%c0, %ati] : tensor<1x4xi64>
  %keep = tensor.from_elements %last : tensor<1xi64>
  util.global.store %keep, @kept : tensor<1xi64>
  %next = arith.addi %last, %c1 : i64
  %k = arith.remsi %next, %c8 : i64
  %h = util.call @one_hot(%k) : (i64) -> tensor<1x8xf32>
  util.return %h : tensor<1x8xf32>
}

util.func public @decode(%token: tensor<1x1xi64>, %position: tensor<1xi64>) -> tensor<1x8xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : i64
  %kept = util.global.load @kept : tensor<1xi64>
  %prev = tensor.extract %kept[%c0] : tensor<1xi64>
  %t = tensor.extract %token[%c0, %c0] : tensor<1x1xi64>
  %p = tensor.extract %position[%c0] : tensor<1xi64>
  %keep = tensor.from_elements %t : tensor<1xi64>
  util.global.store %keep, @kept : tensor<1xi64>
  %s = arith.addi %t, %prev : i64
  %s2 = arith.addi %s, %p : i64
  %k = arith.remsi %s2, %c8 : i64
  %h = util.call @one_hot(%k) : (i64) -> tensor<1x8xf32>
  util.return %h : tensor<1x8xf32>
}
