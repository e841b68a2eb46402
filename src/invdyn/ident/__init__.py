"""Identification of dynamic parameters from measured torques.

`base_parameters` finds the identifiable combinations of a model's dynamic parameters;
`identify` estimates them by ordinary or weighted least squares, with torque offsets.
"""

from invdyn.ident.identify import Identification, identify
from invdyn.ident.parameters import BaseParameters, base_parameters, parameter_names

__all__ = ["BaseParameters", "Identification", "base_parameters", "identify", "parameter_names"]
