"""Differentiable dynamics: torch tensors through rnea, gradients by autograd, and the analytic
derivatives of rnea on the CPU, which agree.

Fits the Panda's payload (the mass of its last link) by gradient descent through rnea, then
checks autograd's d tau / dv against `invdyn.rnea_derivatives`. Needs the ``learn`` (torch) and
``oracle`` (the Panda) extras.
"""

import numpy as np
import torch

import invdyn
from invdyn.configuration import random_configuration

model = invdyn.load("panda")
rng = np.random.default_rng(0)
q = torch.tensor(random_configuration(model, rng=rng, shape=256))
v, a = (torch.tensor(rng.normal(size=(256, model.nv))) for _ in range(2))

# torques measured with 1.5 kg more on the hand than the model knows
truth = torch.tensor(invdyn.inertial_parameters(model))
hand = 10 * (model.nbody - 3)  # panda_link7: the last link before the fingers
heavier = truth.index_add(0, torch.tensor([hand]), torch.tensor([1.5], dtype=torch.float64))
measured = invdyn.rnea(model, q, v, a, params=heavier)

payload = torch.zeros(1, dtype=torch.float64, requires_grad=True)
optimiser = torch.optim.Adam([payload], lr=0.1)
for _ in range(300):
    params = truth.index_add(0, torch.tensor([hand]), payload)
    loss = (invdyn.rnea(model, q, v, a, params=params) - measured).pow(2).mean()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
print(f"payload fitted by gradient descent through rnea: {payload.item():.4f} kg (true 1.5)")
assert abs(payload.item() - 1.5) < 1e-2

# autograd's Jacobian of rnea in v against the analytic derivatives of the compiled kernel
q0, v0, a0 = q[0], v[0], a[0]
autograd = torch.autograd.functional.jacobian(lambda x: invdyn.rnea(model, q0, x, a0), v0)
_, dtau_dv, mass = invdyn.rnea_derivatives(model, q0.numpy(), v0.detach().numpy(), a0.numpy())
difference = np.abs(autograd.numpy() - dtau_dv).max()
print(f"d tau / dv, autograd against the analytic derivatives: max difference {difference:.1e}")
assert np.allclose(autograd.numpy(), dtau_dv, atol=1e-10)
assert np.allclose(mass, invdyn.mass_matrix(model, q0.numpy()))
