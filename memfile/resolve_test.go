package memfile

import ()
