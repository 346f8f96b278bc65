"""The float64 reference made in place from the checked dtype's model: the same answer as model.double(),
with its large weights kept in their dtype (cast for the op that reads them), and the cases where a cast
on use would be wrong (tied weights, recurrent layers) made float64 at once."""

import copy

import torch
from torch.nn.utils import parametrize

from harness.float64_model import LAZY_MIN_BYTES, widen_in_place


class GatedMLP(torch.nn.Module):
    """fused_mlp's Model, with a norm whose buffers and small weight are made float64 at once."""

    def __init__(self, hidden=512, intermediate=2048):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(hidden)
        self.gate = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down = torch.nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        x = self.norm(x)
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def test_the_widened_model_answers_what_model_double_answers_with_its_large_weights_in_their_dtype():
    torch.manual_seed(0)
    model = GatedMLP().to(torch.bfloat16).eval()
    model.norm.running_mean.normal_()
    expected = copy.deepcopy(model).double()
    x = torch.randn(16, 512, dtype=torch.float64)
    largest = widen_in_place(model)
    with torch.no_grad():
        assert torch.equal(model(x), expected(x))
    assert 512 * 2048 * 2 >= LAZY_MIN_BYTES
    for layer in (model.gate, model.up, model.down):
        assert parametrize.is_parametrized(layer, "weight")
        assert layer.parametrizations.weight.original.dtype == torch.bfloat16  # 2 MB, not 8 MB at rest
        assert layer.weight.dtype == torch.float64  # as the op that reads it sees it
    assert not parametrize.is_parametrized(model.norm)
    assert model.norm.weight.dtype == model.norm.running_mean.dtype == torch.float64
    assert largest == 512 * 2048 * 8


def test_tied_weights_stay_one_tensor_and_recurrent_layers_are_made_float64_at_once():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(2048, 512)
            self.head = torch.nn.Linear(512, 2048, bias=False)
            self.head.weight = self.embed.weight  # one 4 MB tensor in two places
            self.rnn = torch.nn.LSTM(512, 512, batch_first=True)  # 1 MB weights, read as cuDNN's flat weights

        def forward(self, tokens):
            out, _ = self.rnn(self.embed(tokens))
            return self.head(out)

    torch.manual_seed(0)
    model = Tied().eval()
    expected = copy.deepcopy(model).double()
    tokens = torch.randint(0, 2048, (2, 5))
    assert widen_in_place(model) == 0
    assert model.head.weight is model.embed.weight and model.embed.weight.dtype == torch.float64
    assert not parametrize.is_parametrized(model.rnn) and model.rnn.weight_hh_l0.dtype == torch.float64
    with torch.no_grad():
        assert torch.equal(model(tokens), expected(tokens))
