"""The card read from nvidia-smi (hardware/detect.py), with a fake nvidia-smi on PATH: a catalog name is that card,
another is a card known by its memory, other processes' memory is counted, and nothing is guessed."""

from __future__ import annotations

import pytest

from fake_smi import install
from hybridplan.errors import BadInput
from hybridplan.hardware.detect import DetectedCard, detect

H100 = "0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559"


def _env(tmp_path, **extra):
    return {"PATH": str(tmp_path), **extra}


def test_a_catalog_card_by_its_name(tmp_path):
    install(tmp_path, [H100, "1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559"])
    assert detect(_env(tmp_path)) == DetectedCard(name="NVIDIA H100 80GB HBM3", memory_mib=81559, others_mib=0,
                                                  count=2, gpu="h100-80gb", gpu_memory_gib=None)


def test_a_catalog_card_reporting_other_memory_sizes_with_the_measured(tmp_path):
    install(tmp_path, ["0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81920"])
    card = detect(_env(tmp_path))
    assert (card.gpu, card.gpu_memory_gib, card.label()) == ("h100-80gb", 80.0, "h100-80gb (81920 MiB)")


def test_a_card_the_catalog_lacks_is_known_by_its_memory(tmp_path):
    install(tmp_path, ["0, GPU-aaaa, NVIDIA L4, 23034"])
    card = detect(_env(tmp_path))
    assert (card.gpu, card.gpu_memory_gib) == (None, 23034 / 1024)
    assert card.label() == "NVIDIA L4 (23034 MiB, not in the catalog)"


def test_other_processes_memory_on_the_busiest_card(tmp_path):
    install(tmp_path, [H100, "1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559"],
            ["GPU-aaaa, 1000", "GPU-aaaa, 500", "GPU-bbbb, 700", "GPU-cccc, 9000"])
    assert detect(_env(tmp_path)).others_mib == 1500
    assert detect(_env(tmp_path, CUDA_VISIBLE_DEVICES="1")).others_mib == 700  # the engine sees card 1 only
    install(tmp_path, [H100], ["GPU-aaaa, [N/A]"])
    assert detect(_env(tmp_path)).others_mib is None  # held, but nvidia-smi does not say how much


def test_mixed_cards_are_not_guessed_but_cuda_visible_devices_narrows_them(tmp_path):
    install(tmp_path, [H100, "1, GPU-bbbb, NVIDIA GeForce RTX 5090, 32607"])
    with pytest.raises(BadInput, match="nvidia-smi lists different cards"):
        detect(_env(tmp_path))
    assert detect(_env(tmp_path, CUDA_VISIBLE_DEVICES="GPU-bbbb")).gpu == "rtx5090"
    with pytest.raises(BadInput, match="names none of the cards"):
        detect(_env(tmp_path, CUDA_VISIBLE_DEVICES="7"))


def test_without_nvidia_smi_nothing_is_guessed(tmp_path):
    with pytest.raises(BadInput, match="no --gpu and no nvidia-smi on PATH") as raised:
        detect(_env(tmp_path))
    assert "\n" not in raised.value.message


def test_a_failing_nvidia_smi_is_named(tmp_path):
    install(tmp_path, [], fail="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    with pytest.raises(BadInput, match="nvidia-smi failed \\(NVIDIA-SMI has failed because it couldn't"):
        detect(_env(tmp_path))
