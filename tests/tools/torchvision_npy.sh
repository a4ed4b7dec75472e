#!/usr/bin/env bash
# docs/data.md's user path: a torchvision ResNet-18 exported to ONNX and 64
# NPY images (scripts/export-torchvision, Debian's python3-torch), through
# `mixtd accuracy --float`: the same top-1 as PyTorch's own forward on at
# least 63 of the 64 images. Usage: torchvision_npy.sh MIXTD SOURCE_DIR WORK_DIR
set -euo pipefail
mixtd=$1 src=$2 work=$3
if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  echo "skipped: Debian's python3-torch / python3-torchvision are not installed"
  exit 0
fi
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$src/scripts/export-torchvision" --out "$work"
"$mixtd" accuracy "$work/resnet18.onnx" --dataset "npy:$work/images.npy,$work/labels.npy" --full --float \
  --predictions "$work/mixtd-float.npy"
"$mixtd" accuracy "$work/resnet18.onnx" --dataset "npy:$work/images.npy,$work/labels.npy" --full \
  --predictions "$work/mixtd-bfp8.npy"
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
torch_top1 = np.load(f"{w}/labels.npy")
flt = np.load(f"{w}/mixtd-float.npy")
bfp8 = np.load(f"{w}/mixtd-bfp8.npy")
same = int((flt == torch_top1).sum())
print(f"float: mixtd and PyTorch agree on {same}/{len(flt)} images; BFP8: {int((bfp8 == torch_top1).sum())}/{len(flt)}")
sys.exit(0 if same >= 63 and len(flt) == 64 else 1)
PY
