package memfile
