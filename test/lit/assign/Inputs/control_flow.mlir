// An scf.if: automatic placement does not model control flow.
module {
  util.func public @main(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
    %r = scf.if %c -> tensor<4xf32> {
      %e = math.exp %x : tensor<4xf32>
      scf.yield %e : tensor<4xf32>
    } else {
      scf.yield %x : tensor<4xf32>
    }
    util.return %r : tensor<4xf32>
  }
}
