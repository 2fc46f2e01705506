# Copyright 2026 robot_dynamics developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Test helpers: a page of the view as a program opens it (viser's websocket protocol)."""

import viser

#: The websocket subprotocol of a page of this viser version
PROTOCOL = [f'viser-v{viser.__version__}']
#: What a page sends once it first renders, after which viser counts it as connected
#: (its ViewerCameraMessage)
CAMERA = {'type': 'ViewerCameraMessage', 'wxyz': [1.0, 0.0, 0.0, 0.0],
          'position': [2.0, 2.0, 2.0], 'fov': 0.9, 'near': 0.01, 'far': 100.0,
          'image_height': 480, 'image_width': 640, 'look_at': [0.0, 0.0, 0.0],
          'up_direction': [0.0, 0.0, 1.0]}
