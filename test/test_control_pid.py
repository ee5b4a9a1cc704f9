"""PID (AGX PidController1D semantics) and the pid_controller/PidController controller."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_core.control import ControlError, ControllerManagerCore, Strictness
from robot_core.control.generic_system import GenericSystem
from robot_core.control.hardware import ComponentJointInfo, HardwareInfo, InterfaceInfo
from robot_core.control.pid import Pid, PidGains


def test_plain_pid_matches_forward_euler():
    pid = Pid(p=2.0, i=0.5, d=0.1)
    dt = 0.1
    errors = [1.0, 0.5, -0.25, 0.0]
    integral, prev, out = 0.0, None, []
    for e in errors:
        integral += e * dt
        deriv = 0.0 if prev is None else (e - prev) / dt
        out.append(2.0 * e + 0.5 * integral + 0.1 * deriv)
        prev = e
    assert [pid.compute(e, dt) for e in errors] == pytest.approx(out)


def test_back_calculation_antiwindup_hand_computed():
    """p=1, i=10, u_max=1, constant error 0.5, dt=0.1.

    step 1: I = 0.5, u = 0.5 + 0.5 = 1.0 (not above the limit) -> 1.0
    step 2: I would be 1.0, u = 1.5 > 1 while integrating upwards -> I back to 0.5, u = 1.0
    step 3: same -> I stays 0.5
    error flips to -0.5: I = 0.5 - 0.5 = 0.0, u = -0.5
    Without anti-windup I reaches 1.5 and the output stays saturated at +1 after the flip (u = 0.5 + ... = 1.0).
    """
    pid = Pid(PidGains(p=1.0, i=10.0, u_min=-1.0, u_max=1.0))
    outs = [pid.compute(0.5, 0.1) for _ in range(3)]
    assert outs == pytest.approx([1.0, 1.0, 1.0])
    assert pid.i_term == pytest.approx(0.5)
    assert pid.compute(-0.5, 0.1) == pytest.approx(-0.5)
    assert pid.i_term == pytest.approx(0.0)

    wound = Pid(PidGains(p=1.0, i=10.0, u_min=-1.0, u_max=1.0, antiwindup=False))
    for _ in range(3):
        wound.compute(0.5, 0.1)
    assert wound.i_term == pytest.approx(1.5)
    assert wound.compute(-0.5, 0.1) == pytest.approx(0.5)  # -0.5 + 1.0: still pushing the wrong way


def test_saturated_integral_still_unwinds():
    # saturated high, error already negative: integration helps leave saturation, so it is not blocked
    pid = Pid(PidGains(p=10.0, i=1.0, u_min=-1.0, u_max=1.0))
    pid.i_term = 5.0
    pid.compute(-0.1, 0.1)
    assert pid.i_term == pytest.approx(4.99)


def test_integral_clamping():
    pid = Pid(PidGains(i=1.0, i_clamp_min=-0.25, i_clamp_max=0.3))
    for _ in range(10):
        pid.compute(1.0, 0.1)
    assert pid.i_term == pytest.approx(0.3) and pid.output == pytest.approx(0.3)
    for _ in range(20):
        pid.compute(-1.0, 0.1)
    assert pid.i_term == pytest.approx(-0.25)


def test_derivative_on_measurement_has_no_setpoint_kick():
    on_err = Pid(PidGains(d=1.0))
    on_meas = Pid(PidGains(d=1.0, derivative_on_measurement=True))
    y = 0.0
    for pid in (on_err, on_meas):
        pid.compute(0.0 - y, 0.01, measurement=y)
    # the set point jumps from 0 to 1 while the measurement stays
    assert on_err.compute(1.0 - y, 0.01, measurement=y) == pytest.approx(100.0)
    assert on_meas.compute(1.0 - y, 0.01, measurement=y) == pytest.approx(0.0)
    # the measurement moves up by 0.01: derivative on measurement opposes it
    assert on_meas.compute(1.0 - 0.01, 0.01, measurement=0.01) == pytest.approx(-1.0)


def test_bad_inputs():
    pid = Pid(p=1.0)
    assert pid.compute(1.0, 0.1) == 1.0
    assert pid.compute(2.0, 0.0) == 1.0  # no time passed: output unchanged
    assert pid.compute(float("nan"), 0.1) == 1.0
    with pytest.raises(ValueError, match="u_min"):
        PidGains(u_min=1.0, u_max=0.0)
    with pytest.raises(ValueError, match="finite"):
        PidGains(p=math.inf)


# --------------------------------------------------------------------------- the controller
def make_cm(**gains) -> ControllerManagerCore:
    cm = ControllerManagerCore(update_rate=100)
    cm.add_hardware_component(GenericSystem(HardwareInfo("m", "system", "mock_components/GenericSystem",
                                                         {"calculate_dynamics": "true"}, [
        ComponentJointInfo(j, [InterfaceInfo("velocity")], [InterfaceInfo("position", 0.0), InterfaceInfo("velocity")])
        for j in ("x", "y")])))
    g = {"p": 2.0, "i": 0.0, "d": 0.0, **gains}
    cm.load_controller("pid", "pid_controller/PidController", {
        "dof_names": ["x", "y"], "command_interface": "velocity",
        "reference_and_state_interfaces": ["position"], "gains": {"x": g, "y": g}})
    cm.configure_controller("pid")
    assert cm.switch_controller(["pid"], [], Strictness.STRICT).ok
    return cm


def test_pid_controller_drives_integrator_plant_to_reference():
    cm = make_cm(u_clamp_max=0.5, u_clamp_min=-0.5)
    pid = cm.controller("pid")
    states = []
    pid.output_sink = lambda key, data: states.append(data)
    cm.update(0.0, 0.01)
    assert cm.rm.read_command("x/velocity") == 0.0  # no reference yet: hold
    pid.set_reference(["x", "y"], [1.0, -0.5])
    for k in range(1, 600):
        cm.update(k * 0.01, 0.01)
    assert cm.rm.read_state("x/position") == pytest.approx(1.0, abs=1e-3)
    assert cm.rm.read_state("y/position") == pytest.approx(-0.5, abs=1e-3)
    # output limited to 0.5 while far away
    first = states[1].dof_states[0]
    assert first.name == "x" and first.reference == 1.0 and first.output == pytest.approx(0.5)
    assert first.error == pytest.approx(1.0) and first.time_step == 0.01
    last = states[-1].dof_states[1]
    assert abs(last.error) < 1e-3


def test_pid_controller_reference_validation_and_partial_update():
    cm = make_cm()
    pid = cm.controller("pid")
    with pytest.raises(ControlError, match="unknown DOFs"):
        pid.set_reference(["z"], [1.0])
    with pytest.raises(ControlError, match="2 values for 1 dof_names"):
        pid.set_reference(["x"], [1.0, 2.0])
    with pytest.raises(ControlError, match="finite"):
        pid.set_reference(["x"], [math.nan])
    pid.set_reference(["x", "y"], [1.0, 1.0])
    pid.set_reference(["y"], [2.0])  # x keeps 1.0
    cm.update(0.0, 0.01)
    assert pid.reference.tolist() == [1.0, 2.0]
    assert np.allclose(pid.output, [2.0, 4.0])
