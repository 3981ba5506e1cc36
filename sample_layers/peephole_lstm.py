"""Peephole LSTM layer with a hand-written backward through time.

Python port of the MATLAB example "Define Custom Recurrent Deep Learning Layer"
(peepholeLSTMLayer), with output mode "sequence". The MATLAB example leaves the
derivative to automatic differentiation; `backward` here is written by hand.

For each time step t, starting from the layer's hidden and cell state (h_0, c_0):

    i_t = sigmoid(W_i x_t + R_i h_{t-1} + p_i .* c_{t-1} + b_i)    input gate
    f_t = sigmoid(W_f x_t + R_f h_{t-1} + p_f .* c_{t-1} + b_f)    forget gate
    g_t = tanh(W_g x_t + R_g h_{t-1} + b_g)                        cell candidate
    c_t = f_t .* c_{t-1} + i_t .* g_t
    o_t = sigmoid(W_o x_t + R_o h_{t-1} + p_o .* c_t + b_o)        output gate
    h_t = o_t .* tanh(c_t)

The output gate looks at the *updated* cell state c_t, the other two at c_{t-1}.

Shapes, with C channels, B observations, T time steps and H hidden units:

    X                  (C, B, T)   layout CBT: channels, batch, time
    input_weights      (4H, C)     W, gate blocks stacked in the order i, f, g, o
    recurrent_weights  (4H, H)     R, same gate order
    peephole_weights   (3H, 1)     p, blocks in the order i, f, o
    bias               (4H, 1)     b, gate order i, f, g, o
    hidden_state       (H, B)      h_0 on entry; predict returns h_T
    cell_state         (H, B)      c_0 on entry; predict returns c_T
    Y                  (H, B, T)   h_1 .. h_T, layout CBT

Initialization follows the MATLAB example (Glorot for the input and peephole weights,
orthogonal for the recurrent weights, unit forget gate bias), except that the bias also
gets small random noise so that no two hidden units start out identical. Runs on NumPy
and CuPy and keeps the input's dtype.
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


def sigmoid(z):
    # The tanh form never overflows, unlike 1 / (1 + exp(-z)) for large negative z.
    return 0.5 * (1 + get_array_module(z).tanh(0.5 * z))


def glorot(num_out, num_in, shape):
    """Uniform on [-a, a] with a = sqrt(6 / (num_in + num_out)) (MATLAB's initializeGlorot)."""
    bound = np.sqrt(6 / (num_in + num_out))
    return bound * (2 * np.random.rand(*shape) - 1)


def orthogonal(shape):
    """Orthonormal columns, signs fixed by R's diagonal (MATLAB's initializeOrthogonal)."""
    q, r = np.linalg.qr(np.random.randn(*shape))
    return q * np.sign(np.diag(r))


class PeepholeLSTM:
    """LSTM whose input, forget and output gates also see the cell state (peepholes)."""

    learnables = ("input_weights", "recurrent_weights", "peephole_weights", "bias")
    state = ("hidden_state", "cell_state")
    example_layout = "5,4,7:CBT"

    def __init__(self, num_hidden_units=6, name="lstm"):
        self.name = name
        self.num_hidden_units = num_hidden_units
        self.description = f"Peephole LSTM with {num_hidden_units} hidden units"
        self.input_weights = None
        self.recurrent_weights = None
        self.peephole_weights = None
        self.bias = None
        self.hidden_state = None
        self.cell_state = None

    def initialize(self, layout):
        """Fill the empty learnables and states for a CBT input layout."""
        if layout.format != "CBT":
            raise ValueError(f"PeepholeLSTM {self.name!r} takes CBT input (channels, batch, time), got {layout.format}")
        H = self.num_hidden_units
        C = layout.size[layout.find("C")]
        B = layout.size[layout.find("B")]
        if self.input_weights is None:
            self.input_weights = glorot(4 * H, C, (4 * H, C))
        if self.recurrent_weights is None:
            self.recurrent_weights = orthogonal((4 * H, H))
        if self.peephole_weights is None:
            self.peephole_weights = glorot(3 * H, 1, (3 * H, 1))
        if self.bias is None:
            bias = 0.1 * np.random.randn(4 * H, 1)
            bias[H : 2 * H] += 1  # unit forget gate: remember by default early in training
            self.bias = bias
        if self.hidden_state is None:
            self.hidden_state = np.zeros((H, B))
        if self.cell_state is None:
            self.cell_state = np.zeros((H, B))

    def reset_state(self):
        """Zero the hidden and cell state (MATLAB's resetState), keeping shape and dtype."""
        self.hidden_state = get_array_module(self.hidden_state).zeros_like(self.hidden_state)
        self.cell_state = get_array_module(self.cell_state).zeros_like(self.cell_state)

    def predict(self, X):
        """Return (Y, hidden_state, cell_state): every h_t, then h_T and c_T."""
        Y, h, c, _ = self.forward(X)
        return Y, h, c

    def forward(self, X):
        """As predict, plus the memory backward needs: gates, cell and hidden states."""
        xp = get_array_module(X)
        W, R, b = self.input_weights, self.recurrent_weights, self.bias
        H = R.shape[1]
        _, B, T = X.shape
        p_i, p_f, p_o = self.peephole_weights[:H], self.peephole_weights[H : 2 * H], self.peephole_weights[2 * H :]

        # Time-major buffers so each step reads and writes one contiguous slab. Slot 0 of
        # hs and cs holds the initial state, so step t reads slot t and writes slot t + 1.
        gates = xp.empty((T, 4 * H, B), dtype=X.dtype)
        hs = xp.empty((T + 1, H, B), dtype=X.dtype)
        cs = xp.empty((T + 1, H, B), dtype=X.dtype)
        hs[0] = self.hidden_state
        cs[0] = self.cell_state

        # The input term does not depend on the recurrence: one batched matmul for all steps.
        Z = xp.matmul(W, X.transpose(2, 0, 1)) + b
        for t in range(T):
            z = Z[t] + R @ hs[t]
            c_prev = cs[t]
            i = sigmoid(z[:H] + p_i * c_prev)
            f = sigmoid(z[H : 2 * H] + p_f * c_prev)
            g = xp.tanh(z[2 * H : 3 * H])
            c = f * c_prev + i * g
            o = sigmoid(z[3 * H :] + p_o * c)
            gates[t, :H], gates[t, H : 2 * H], gates[t, 2 * H : 3 * H], gates[t, 3 * H :] = i, f, g, o
            cs[t + 1] = c
            hs[t + 1] = o * xp.tanh(c)

        Y = hs[1:].transpose(1, 2, 0).copy()
        return Y, hs[T].copy(), cs[T].copy(), (gates, hs, cs)

    def backward(self, X, Y, dLdY, dLdH_out, dLdC_out, memory):
        """Backpropagation through time.

        Returns (dLdX, dLdW, dLdR, dLdp, dLdb, dLdh_0, dLdc_0).
        """
        xp = get_array_module(X)
        gates, hs, cs = memory
        W, R = self.input_weights, self.recurrent_weights
        H = R.shape[1]
        T = X.shape[2]
        p_i, p_f, p_o = self.peephole_weights[:H], self.peephole_weights[H : 2 * H], self.peephole_weights[2 * H :]

        # dL/d(gate pre-activations) per step, gate order i, f, g, o as in W, R and b.
        dZ = xp.empty_like(gates)
        # h_T and c_T are returned as the updated states as well as (h_T) the last
        # output, so their gradients enter the recursion as its starting values.
        dh_next, dc_next = dLdH_out, dLdC_out
        for t in range(T - 1, -1, -1):
            i, f, g, o = gates[t, :H], gates[t, H : 2 * H], gates[t, 2 * H : 3 * H], gates[t, 3 * H :]
            c_prev = cs[t]
            tanh_c = xp.tanh(cs[t + 1])
            dh = dLdY[:, :, t] + dh_next
            dzo = dh * tanh_c * o * (1 - o)
            # c_t reaches the loss through h_t = o_t tanh(c_t), through the output-gate
            # peephole, and through c_{t+1} (dc_next).
            dc = dc_next + dh * o * (1 - tanh_c**2) + dzo * p_o
            dzi = dc * g * i * (1 - i)
            dzf = dc * c_prev * f * (1 - f)
            dzg = dc * i * (1 - g**2)
            dZ[t, :H], dZ[t, H : 2 * H], dZ[t, 2 * H : 3 * H], dZ[t, 3 * H :] = dzi, dzf, dzg, dzo
            # c_{t-1} feeds c_t directly and the input and forget gates through peepholes.
            dc_next = dc * f + dzi * p_i + dzf * p_f
            dh_next = R.T @ dZ[t]

        # Everything below is outside the recursion: batched over time and observations.
        dLdX = xp.matmul(W.T, dZ).transpose(1, 2, 0)
        dLdW = xp.tensordot(dZ, X, axes=([0, 2], [2, 1]))
        dLdR = xp.tensordot(dZ, hs[:T], axes=([0, 2], [0, 2]))
        dLdb = xp.sum(dZ, axis=(0, 2)).reshape(4 * H, 1)
        dLdp = xp.empty_like(self.peephole_weights)
        dLdp[:H, 0] = xp.sum(dZ[:, :H] * cs[:T], axis=(0, 2))
        dLdp[H : 2 * H, 0] = xp.sum(dZ[:, H : 2 * H] * cs[:T], axis=(0, 2))
        dLdp[2 * H :, 0] = xp.sum(dZ[:, 3 * H :] * cs[1:], axis=(0, 2))  # o_t peeks at c_t
        return dLdX, dLdW, dLdR, dLdp, dLdb, dh_next, dc_next
