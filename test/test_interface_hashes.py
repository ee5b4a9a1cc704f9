# ruff: noqa: E501  (type hashes are long literals)
"""The interface packages robot_core talks through hash exactly like upstream's.

Since ROS 2 Iron, a type's wire identity is its RIHS01 hash (field names, types, order and
constants). The expected hashes below were computed from the upstream definitions
(control_msgs 6.8.0, controller_manager_msgs of ros2_control master, tf2_msgs 0.39.1) with the
same rosidl generators as the set-up uses; they are facts about those types. The test reads the
type descriptions installed in the environment — our compat copies on a pip-only machine, the
distribution's packages elsewhere — so a drifted field list is caught either way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

UPSTREAM_RIHS01 = {
    "control_msgs/action/FollowJointTrajectory": "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    "control_msgs/action/GripperCommand": "RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84",
    "control_msgs/action/ParallelGripperCommand": "RIHS01_adfd3c1ebe8abc38ebcc0e454b6423d291d4010dd5697d14eca5b9be4726ae18",
    "control_msgs/msg/DynamicJointState": "RIHS01_18024c98a62697680f581108eeed40b28fb4542fa0ac5a8e36f56c62b6813d26",
    "control_msgs/msg/GripperCommand": "RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890",
    "control_msgs/msg/InterfaceValue": "RIHS01_74a12144ef6b7af67533195cb30f7f607d3301b66950208a72d280695f3e190c",
    "control_msgs/msg/JointComponentTolerance": "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
    "control_msgs/msg/JointTolerance": "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "control_msgs/msg/JointTrajectoryControllerState": "RIHS01_51d8dd89cc624cbe9daaeeb4d80d6de9b86168ffdc3be41fefc0953e3c26e480",
    "control_msgs/msg/MultiDOFCommand": "RIHS01_033fb0fa1ffc63a872ca73c61a49ded83a22daa5cc3f074cc28949f73359e677",
    "control_msgs/msg/MultiDOFStateStamped": "RIHS01_08e47e3e734a7d08131b57e14e9f740782f3bf9a1aadabd2a16b54d27e551f0a",
    "control_msgs/msg/SingleDOFState": "RIHS01_fe8365f86265bddfefbd26698975a818bf024a1c267c8ce577cd366ef06d7163",
    "control_msgs/srv/QueryTrajectoryState": "RIHS01_4a0935dffef18bc5b9e101c9d03d84e681ecd4cebd724b8f11fde008751a325a",
    "controller_manager_msgs/msg/ChainConnection": "RIHS01_2daecd1da4b171f48b291c79747657a651eb1ab8821b68e38b1c88c736bba91c",
    "controller_manager_msgs/msg/ControllerManagerActivity": "RIHS01_35b7de5d611b6780e89732de325f2f765eacdb8a7adfe5821a27af4a03a7c244",
    "controller_manager_msgs/msg/ControllerState": "RIHS01_9a8780ab9814b6032978a07c6c7033cf1a7894ac8d948a6fb72afea07b04cc83",
    "controller_manager_msgs/msg/HardwareComponentState": "RIHS01_42dd5e6ce049005558e2e8d12cbb0003087fb3b7914b69148a915d7267ec7618",
    "controller_manager_msgs/msg/HardwareInterface": "RIHS01_b4c556991db81ca56a49338b5e8f0675a6707faee54fba161d2bbd4d963d418a",
    "controller_manager_msgs/msg/NamedLifecycleState": "RIHS01_b7947b6f8df8f7e93d1cb8d115842fb0eeddfa6fb5c7b86cc0f3cafd55be4c1f",
    "controller_manager_msgs/srv/CleanupController": "RIHS01_0e5e0da84cf97150abbb3a4e2249c67e6f43dba01ed9b7228b4deaab8838ec4b",
    "controller_manager_msgs/srv/ConfigureController": "RIHS01_b5de498113f4eabc7b932e019ca0498d67304b1ca465fe8a426ea89644865ff9",
    "controller_manager_msgs/srv/ListControllerTypes": "RIHS01_873e8d2bb81b8b5903ca736d299ba959f929efec4b4a18d17354b8b322822e05",
    "controller_manager_msgs/srv/ListControllers": "RIHS01_4f8e36bb1fa5afdeba45c2d56ae6a2097b1493a253f961dd6290c085033bd189",
    "controller_manager_msgs/srv/ListHardwareComponents": "RIHS01_da29c2bbff9ec4f28d2815b9906ff51e419cebb6e79e216d4350110459b5164f",
    "controller_manager_msgs/srv/ListHardwareInterfaces": "RIHS01_c3e561a6e8cc7b9d577d8065c783038e51f6950cbe9bed67fb117a3e2e04d8f1",
    "controller_manager_msgs/srv/LoadController": "RIHS01_e37f7596c50c88cf8cb7a10cd376ff7579850cc63b5e787e9c8f11981f9ab4d2",
    "controller_manager_msgs/srv/ReloadControllerLibraries": "RIHS01_485cd0040f8a343a9596155b967363e1bc715f034bbb111f795c73d9d8056a9b",
    "controller_manager_msgs/srv/SetHardwareComponentState": "RIHS01_940b15846ed3e1fb561ab45edf77a992b811fd59c574f45d5205a84a0deb2f65",
    "controller_manager_msgs/srv/SwitchController": "RIHS01_d4ad10aa5da7808bc522d55d4123d8ef79de73d049d165639d7663ac37cc9895",
    "controller_manager_msgs/srv/UnloadController": "RIHS01_4055728e84c041348648d7f808c6681562000e3a9ce9fbb42c3350df25773f16",
    "tf2_msgs/msg/TFMessage": "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
}


def _installed_description(type_name: str) -> Path | None:
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    import sys

    prefixes.append(sys.prefix)
    for prefix in prefixes:
        candidate = Path(prefix) / "share" / f"{type_name}.json"
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.parametrize("type_name", sorted(UPSTREAM_RIHS01))
def test_type_hash_matches_upstream(type_name):
    path = _installed_description(type_name)
    if path is None:
        pytest.skip(f"no installed type description for {type_name}")
    data = json.loads(path.read_text())
    hashes = {h["type_name"]: h["hash_string"] for h in data["type_hashes"]}
    assert hashes[type_name] == UPSTREAM_RIHS01[type_name], f"{type_name} differs from upstream ({path})"


def test_every_compat_interface_is_checked():
    """A new compat file must come with its upstream hash (keeps the list above complete)."""
    root = Path(__file__).resolve().parent.parent / "interfaces" / "compat"
    names = {f"{p.parent.parent.name}/{p.parent.name}/{p.stem}" for p in root.glob("*/*/*.*")
             if p.suffix in (".msg", ".srv", ".action")}
    assert names == set(UPSTREAM_RIHS01)
