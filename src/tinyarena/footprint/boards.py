"""Boards ``tinyarena fit --board`` knows: the memory TFLM can use, with where each figure is from.

``ram`` and ``flash`` are the on-chip memories of the part (external PSRAM where the board
name says so), from the manufacturer's datasheet named in ``source``; a firmware's own code,
stack, heap and other buffers come out of the same memory, so ``fit``'s headroom is what is left
for them. ``target`` is the TFLM ``TARGET_ARCH`` (tinyarena ``--target``) and ``kernels`` the
kernel set a TFLM port for the board links.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Board:
    """One development board: its MCU, core, TFLM build and memories (bytes)."""

    name: str
    mcu: str
    core: str
    target: str
    kernels: str
    ram: int
    flash: int
    source: str
    note: str = ""


BOARDS: tuple[Board, ...] = (
    Board("arduino-nano-33-ble", "Nordic nRF52840", "Cortex-M4F, 64 MHz", "cortex-m4",
          "cmsis-nn", 256 * KIB, 1 * MIB,
          "Nordic nRF52840 Product Specification v1.7 (1 MB flash, 256 KB RAM); Arduino "
          "Nano 33 BLE datasheet ABX00030, https://docs.arduino.cc/hardware/nano-33-ble",
          "sized as TFLM TARGET_ARCH=cortex-m4 (soft-float; the FPU unused)"),
    Board("pico", "Raspberry Pi RP2040", "dual Cortex-M0+, 133 MHz", "cortex-m0plus",
          "reference", 264 * KIB, 2 * MIB,
          "Raspberry Pi Pico datasheet (264 KB on-chip SRAM, 2 MB QSPI flash W25Q16JV), "
          "https://datasheets.raspberrypi.com/pico/pico-datasheet.pdf"),
    Board("stm32f746g-disco", "ST STM32F746NG", "Cortex-M7F, 216 MHz", "cortex-m7+fp",
          "cmsis-nn", 320 * KIB, 1 * MIB,
          "ST DS10916 STM32F745xx/STM32F746xx datasheet (1 MB flash, 320 KB SRAM incl. 64 KB "
          "DTCM); the board's 8 MB SDRAM and 16 MB QSPI flash not counted"),
    Board("nucleo-l4r5zi", "ST STM32L4R5ZI", "Cortex-M4F, 120 MHz", "cortex-m4", "cmsis-nn",
          640 * KIB, 2 * MIB,
          "ST DS12023 STM32L4R5xx/L4R7xx/L4R9xx datasheet (2 MB flash, 640 KB SRAM)",
          "sized as TFLM TARGET_ARCH=cortex-m4 (soft-float; the FPU unused)"),
    Board("nrf5340dk", "Nordic nRF5340 (application core)", "Cortex-M33, 128 MHz",
          "cortex-m33", "cmsis-nn", 512 * KIB, 1 * MIB,
          "Nordic nRF5340 Product Specification v1.3 (application core: 1 MB flash, 512 KB "
          "RAM; the network core's 256 KB flash and 64 KB RAM not counted)"),
    Board("esp32-s3-devkitc", "Espressif ESP32-S3 (ESP32-S3-WROOM-1-N8)", "dual Xtensa LX7, "
          "240 MHz", "esp32s3", "esp-nn", 512 * KIB, 8 * MIB,
          "Espressif ESP32-S3 Series Datasheet v1.9 (512 KB SRAM); ESP32-S3-DevKitC-1 user "
          "guide (module N8: 8 MB flash, no PSRAM)",
          "part of the 512 KB SRAM holds ESP-IDF's own code and caches"),
    Board("esp32-s3-devkitc-psram", "Espressif ESP32-S3 (ESP32-S3-WROOM-1-N8R8)",
          "dual Xtensa LX7, 240 MHz", "esp32s3", "esp-nn", 512 * KIB + 8 * MIB, 8 * MIB,
          "Espressif ESP32-S3 Series Datasheet v1.9 (512 KB SRAM); ESP32-S3-DevKitC-1 user "
          "guide (module N8R8: 8 MB flash, 8 MB octal PSRAM)",
          "RAM is 512 KB SRAM + 8 MB PSRAM; an arena in PSRAM runs slower"),
    Board("corstone-300", "Arm Corstone-300 (FVP / MPS3 AN547) with Ethos-U55",
          "Cortex-M55 + Ethos-U55", "cortex-m55", "cmsis-nn", 2 * MIB, 32 * MIB,
          "Arm Corstone-300 memory map as CMSIS-NN's Tests/UnitTest/Corstone-300/linker.ld "
          "(4ab83cc3) declares it: ITCM 512 KB, DTCM 512 KB, SRAM 2 MB, DDR 32 MB",
          "RAM is the 2 MB SRAM, flash the 32 MB DDR the model and code load into (the FVP "
          "has no flash); sized for the Cortex-M55's CMSIS-NN (MVE) kernels, as a model Vela "
          "did not compile runs: the Ethos-U driver and its ethos-u operator not counted"),
    Board("sparkfun-edge", "Ambiq Apollo3 Blue", "Cortex-M4F, 48/96 MHz", "cortex-m4",
          "cmsis-nn", 384 * KIB, 1 * MIB,
          "Ambiq Apollo3 Blue SoC datasheet DS-A3-0p9p1 (1 MB flash, 384 KB SRAM); SparkFun "
          "Edge Development Board (Apollo3 Blue) product page",
          "sized as TFLM TARGET_ARCH=cortex-m4 (soft-float; the FPU unused)"),
)


def board_names() -> tuple[str, ...]:
    return tuple(b.name for b in BOARDS)


def get_board(name: str) -> Board | None:
    """The board called ``name``, or None."""
    return next((b for b in BOARDS if b.name == name), None)


__all__ = ["BOARDS", "Board", "board_names", "get_board"]
